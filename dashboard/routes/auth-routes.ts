import type { Router } from '@koa/router';
import {
  acceptInvitation, endAllSessions, endSession, expiredInvitation, findInvitation, forgetOtherDevices, justAcceptedInvitation, membershipsOf, MIN_PASSWORD_LENGTH, signIn,
  type PasswordCheckSlots, type SignInLimits,
} from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { deviceTokenFor, rememberDevice } from '../device-cookie.js';
import { isLanguage } from '../i18n/translate.js';
import { LANGUAGE_COOKIE, SESSION_COOKIE, setCookie, setSessionCookie } from '../middleware/cookies.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { csrfField, field, notice } from '../views/components.js';
import { html, type HtmlValue } from '../views/html.js';
import { fieldRefusals, invalidInputMessage } from '../views/invalid-input.js';
import { bareLayout } from '../views/layout.js';

export interface AuthRouteDeps {
  db: Db;
  secureCookies: boolean;
  signInLimits?: SignInLimits;
  /** The app's password-check slots (app.ts), shared with the password change. */
  passwordChecks: PasswordCheckSlots;
}

/** Only our own paths: never an open redirect to another site. */
export function safeNext(next: unknown, fallback = '/'): string {
  return typeof next === 'string' && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : fallback;
}

// A wrong e-mail or password is said once, vaguely (which one was wrong is not told), but both
// fields are marked invalid and described by it; a blank field is asked for under itself.
const CREDENTIALS_REFUSAL_ID = 'sign-in-error';

function signInPage(state: DashboardState, options: { email?: string; error?: HtmlValue; next: string; info?: string; wrongCredentials?: boolean; refusals?: { email?: string; password?: string } }): string {
  const { t } = state;
  const refusedBy = options.wrongCredentials ? CREDENTIALS_REFUSAL_ID : undefined;
  return bareLayout(state, {
    title: t('auth.signInTitle'),
    path: '/sign-in',
    body: html`
      ${options.error ? html`<div class="notice notice-bad" role="alert" id="${CREDENTIALS_REFUSAL_ID}">${options.error}</div>` : ''}
      ${options.info ? notice(options.info, 'good') : ''}
      <form method="post" action="/sign-in" class="stack">
        ${csrfField(state)}
        <input type="hidden" name="next" value="${options.next}">
        ${field({ label: t('auth.email'), name: 'email', type: 'email', value: options.email ?? '', required: true, autocomplete: 'username', id: 'email', error: options.refusals?.email, refusedBy })}
        ${field({ label: t('auth.password'), name: 'password', type: 'password', required: true, autocomplete: 'current-password', id: 'password', error: options.refusals?.password, refusedBy })}
        <button type="submit" class="btn btn-primary btn-block">${t('auth.signIn')}</button>
      </form>
      <p class="muted small" id="forgot-password">${t('auth.forgot')}</p>`,
  });
}

export function registerAuthRoutes(router: Router<DashboardState>, deps: AuthRouteDeps): void {
  const { db, passwordChecks } = deps;

  router.get('/', async (ctx) => {
    const session = ctx.state.session;
    if (!session) return ctx.redirect('/sign-in');
    if (session.user.isOperator) return ctx.redirect('/operator');
    const memberships = await membershipsOf(db, session.user.id);
    ctx.redirect(memberships.length === 1 ? `/orgs/${memberships[0]!.organizationId}` : '/orgs');
  });

  router.get('/sign-in', (ctx) => {
    if (ctx.state.session) return ctx.redirect(safeNext(ctx.query.next));
    const info = ctx.query.done === 'everywhere' ? ctx.state.t('auth.signedOutEverywhere') : ctx.query.done === 'reset' ? ctx.state.t('auth.passwordReset') : undefined;
    ctx.body = signInPage(ctx.state, { next: safeNext(ctx.query.next), info });
  });

  router.post('/sign-in', async (ctx) => {
    const { email = '', password = '', next } = ctx.state.form;
    // A blank field is asked for, not checked: no guess is made, and none is counted.
    if (email.trim() === '' || password === '') {
      const { t } = ctx.state;
      const refusals = { email: email.trim() === '' ? t('auth.emailRequired') : undefined, password: password === '' ? t('auth.passwordRequired') : undefined };
      const said = [refusals.email && `${t('auth.email')}: ${refusals.email}`, refusals.password && `${t('auth.password')}: ${refusals.password}`].filter(Boolean).join('; ');
      ctx.status = 422;
      ctx.body = signInPage(ctx.state, { email, error: t('error.invalid', { message: said }), refusals, next: safeNext(next) });
      return;
    }
    const device = deviceTokenFor(ctx, email);
    const result = await signIn(db, { email, password, ip: ctx.ip || null, device, limits: deps.signInLimits, passwordChecks });
    if (!result.ok) {
      const t = ctx.state.t;
      ctx.status = result.reason === 'invalid' ? 401 : 429;
      if (result.reason !== 'invalid') ctx.set('Retry-After', String(result.retryAfterSeconds));
      // Locked, a browser that holds a secret for the e-mail is one that lost its trust: telling
      // it to use a browser it signed in with before would send it round in a circle. Said by
      // what the cookie holds, not by what the database knows, so it tells a forger nothing.
      const minutes = result.reason === 'invalid' ? 0 : Math.ceil(result.retryAfterSeconds / 60);
      const error = result.reason === 'locked' ? t(device ? 'auth.lockedHere' : 'auth.locked', { minutes })
        : result.reason === 'addressLocked' ? t('auth.addressLocked', { minutes })
          : result.reason === 'busy' ? t('auth.busy') : t('auth.invalid');
      ctx.body = signInPage(ctx.state, { email, error, next: safeNext(next), wrongCredentials: result.reason === 'invalid' });
      return;
    }
    setSessionCookie(ctx, result.session, deps.secureCookies);
    rememberDevice(ctx, result.email, result.device, deps.secureCookies);
    ctx.redirect(safeNext(next));
  });

  router.post('/sign-out', async (ctx) => {
    if (ctx.state.sessionToken) await endSession(db, ctx.state.sessionToken);
    setCookie(ctx, SESSION_COOKIE, '', { secure: deps.secureCookies, maxAge: 0 });
    ctx.redirect('/sign-in');
  });

  // Everywhere also means the browsers that were trusted to sign in past a lock on the e-mail
  // (a lost laptop's cookie would still be worth a few guesses), all but this one.
  router.post('/sign-out-everywhere', async (ctx) => {
    const user = ctx.state.session?.user;
    if (user) {
      await db.transaction(async (trx) => {
        await endAllSessions(trx, user.id);
        await forgetOtherDevices(trx, user.id, deviceTokenFor(ctx, user.email));
      });
    }
    setCookie(ctx, SESSION_COOKIE, '', { secure: deps.secureCookies, maxAge: 0 });
    ctx.redirect('/sign-in?done=everywhere');
  });

  router.get('/language', (ctx) => {
    const lang = ctx.query.lang;
    if (isLanguage(lang)) setCookie(ctx, LANGUAGE_COOKIE, lang, { secure: deps.secureCookies, maxAge: 365 * 86_400 });
    ctx.redirect(safeNext(ctx.query.next));
  });

  const invitationPage = (state: DashboardState, token: string, body: HtmlValue, title: string) =>
    bareLayout(state, { title, path: `/invitations/${token}`, body });

  // A link that no longer opens. Just accepted (the second answer of a double-click, a reload of
  // the form, Back to it): the person joined, so they are sent on, or asked to sign in, rather
  // than told the link failed. Expired: said so, with when and to what. Otherwise (used long ago,
  // cancelled, mistyped): the reasons it may have, said as one. Headed as what it is, not as a
  // failure of ours ("Something went wrong").
  const noLongerOpen = async (ctx: DashboardContext, token: string) => {
    const { t } = ctx.state;
    const accepted = await justAcceptedInvitation(db, token);
    if (accepted && ctx.state.session) return ctx.redirect(`/orgs/${accepted.organizationId}`);
    if (accepted) {
      const next = `/sign-in?next=${encodeURIComponent(`/orgs/${accepted.organizationId}`)}`;
      ctx.body = invitationPage(ctx.state, token, html`${notice(t('invite.accepted', { org: accepted.organizationName }), 'good')}
        <p><a class="btn btn-primary" href="${next}">${t('auth.signIn')}</a></p>`, t('invite.title', { org: accepted.organizationName }));
      return;
    }
    ctx.status = 404;
    const expired = await expiredInvitation(db, token);
    const said = expired ? t('invite.expired', { org: expired.organizationName, date: ctx.state.f.dateTime(expired.expiresAt) }) : t('invite.invalid');
    ctx.body = invitationPage(ctx.state, token, notice(said, 'bad'), t('invite.noLongerWorks'));
  };

  router.get('/invitations/:token', async (ctx) => {
    const { t } = ctx.state;
    const token = ctx.params.token!;
    const invitation = await findInvitation(db, token);
    if (!invitation) return noLongerOpen(ctx, token);
    ctx.body = invitationPage(ctx.state, token, invitationForm(ctx.state, token, invitation), t('invite.title', { org: invitation.organizationName }));
  });

  router.post('/invitations/:token', async (ctx) => {
    const { t } = ctx.state;
    const token = ctx.params.token!;
    const invitation = await findInvitation(db, token);
    if (!invitation) return noLongerOpen(ctx, token);
    const { password, confirmPassword, name } = ctx.state.form;
    const result = await acceptInvitation(db, { token, password, confirmPassword, name, signedInUserId: ctx.state.session?.user.id ?? null });
    // Accepted meanwhile: the other request of a double-click won the invitation's lock.
    if (!result.ok && result.reason === 'invalid_or_expired') return noLongerOpen(ctx, token);
    if (!result.ok) {
      ctx.status = 422;
      const message = result.reason === 'invalid_params' ? t('error.invalid', { message: invalidInputMessage(ctx.state, result.error, { name: 'invite.name' }) })
        : result.reason === 'sign_in_required' ? t('invite.signInRequired') : t('invite.invalid');
      // The name comes back as typed (the password never does), with why under each refused field.
      const refused = { typedName: ctx.state.form.name, refusals: result.reason === 'invalid_params' ? fieldRefusals(ctx.state, result.error) : {} };
      ctx.body = invitationPage(ctx.state, token, html`${notice(message, 'bad')}${invitationForm(ctx.state, token, invitation, refused)}`, t('invite.title', { org: invitation.organizationName }));
      return;
    }
    if (ctx.state.session) return ctx.redirect(`/orgs/${result.organizationId}`);
    // A new person signs in with the password they just chose: the usual path, rate limit and all.
    const signedIn = await signIn(db, {
      email: invitation.email, password: ctx.state.form.password ?? '', ip: ctx.ip || null, device: deviceTokenFor(ctx, invitation.email), limits: deps.signInLimits, passwordChecks,
    });
    if (signedIn.ok) {
      setSessionCookie(ctx, signedIn.session, deps.secureCookies);
      rememberDevice(ctx, signedIn.email, signedIn.device, deps.secureCookies);
      return ctx.redirect(`/orgs/${result.organizationId}`);
    }
    ctx.redirect(`/sign-in?next=${encodeURIComponent(`/orgs/${result.organizationId}`)}`);
  });
}

function invitationForm(
  state: DashboardState,
  token: string,
  invitation: { organizationName: string; email: string; role: 'admin' | 'finance'; existingUser: boolean },
  refused: { typedName?: string; refusals: Partial<Record<string, string>> } = { refusals: {} },
): HtmlValue {
  const { t } = state;
  const role = t(`role.${invitation.role}`);
  if (invitation.existingUser) {
    const signedInAsInvitee = state.session?.user.email.toLowerCase() === invitation.email.toLowerCase();
    if (!signedInAsInvitee) {
      return html`<p>${t('invite.introExisting', { org: invitation.organizationName, role, email: invitation.email })}</p>
        <p><a class="btn btn-primary" href="/sign-in?next=${encodeURIComponent(`/invitations/${token}`)}">${t('auth.signIn')}</a></p>`;
    }
    // What they agree to, before the button: the role, in the page's language.
    return html`<p>${t('invite.introSignedIn', { org: invitation.organizationName, role })}</p>
      <form method="post" action="/invitations/${token}" class="stack">${csrfField(state)}
      <button class="btn btn-primary btn-block" type="submit">${t('invite.acceptAs', { email: invitation.email })}</button></form>`;
  }
  return html`<p>${t('invite.intro', { org: invitation.organizationName, role })}</p>
    <form method="post" action="/invitations/${token}" class="stack">
      ${csrfField(state)}
      ${field({ label: t('auth.email'), name: 'email_display', type: 'email', value: invitation.email, autocomplete: 'username', id: 'invite-email', readonly: true })}
      ${field({ label: t('invite.name'), name: 'name', autocomplete: 'name', value: refused.typedName ?? null, id: 'invite-name', error: refused.refusals.name })}
      ${field({ label: t('invite.password'), name: 'password', type: 'password', required: true, autocomplete: 'new-password', help: t('invite.passwordHelp', { n: MIN_PASSWORD_LENGTH }), id: 'invite-password', error: refused.refusals.password })}
      ${field({ label: t('account.confirmPassword'), name: 'confirmPassword', type: 'password', required: true, autocomplete: 'new-password', id: 'invite-confirm-password', error: refused.refusals.confirmPassword })}
      <button class="btn btn-primary btn-block" type="submit">${t('invite.accept')}</button>
    </form>`;
}
