import type { Router } from '@koa/router';
import { findPasswordReset, MIN_PASSWORD_LENGTH, resetPassword, signIn, type PasswordCheckSlots, type PasswordResetState, type SignInLimits } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { deviceTokenFor, rememberDevice } from '../device-cookie.js';
import { setSessionCookie } from '../middleware/cookies.js';
import type { DashboardContext, DashboardState } from '../state.js';
import { csrfField, field, notice } from '../views/components.js';
import { html, type HtmlValue } from '../views/html.js';
import { fieldRefusals, invalidInputMessage } from '../views/invalid-input.js';
import { bareLayout } from '../views/layout.js';

export interface PasswordResetRouteDeps {
  db: Db;
  secureCookies: boolean;
  signInLimits?: SignInLimits;
  /** The app's password-check slots: the sign-in after a reset takes one. */
  passwordChecks: PasswordCheckSlots;
}

const pathOf = (token: string) => `/password-reset/${token}`;

function resetPage(state: DashboardState, token: string, body: HtmlValue): string {
  return bareLayout(state, { title: state.t('reset.title'), path: pathOf(token), body });
}

function resetForm(state: DashboardState, token: string, email: string, refusals: Partial<Record<string, string>> = {}): HtmlValue {
  const { t } = state;
  return html`<p>${t('reset.intro', { email })}</p>
    <form method="post" action="${pathOf(token)}" class="stack" data-submit-once>
      ${csrfField(state)}
      ${field({ label: t('auth.email'), name: 'email_display', type: 'email', value: email, autocomplete: 'username', id: 'reset-email', readonly: true })}
      ${field({ label: t('account.newPassword'), name: 'newPassword', type: 'password', required: true, autocomplete: 'new-password', id: 'new-password', help: t('invite.passwordHelp', { n: MIN_PASSWORD_LENGTH }), error: refusals.newPassword })}
      ${field({ label: t('account.confirmPassword'), name: 'confirmPassword', type: 'password', required: true, autocomplete: 'new-password', id: 'confirm-password', error: refusals.confirmPassword })}
      <button class="btn btn-primary btn-block" type="submit">${t('reset.button')}</button>
    </form>`;
}

/**
 * A password reset link's page (core/dashboard-auth/password-resets.ts): the new password twice,
 * then the person is signed in with it, as after an accepted invitation. A link that opens
 * nothing says why (used, expired, not valid) and whom to ask for a new one, with 404 as an
 * invitation's does.
 */
export function registerPasswordResetRoutes(router: Router<DashboardState>, deps: PasswordResetRouteDeps): void {
  const { db } = deps;

  const closed = (ctx: DashboardContext, token: string, state: Exclude<PasswordResetState, { state: 'open' }>) => {
    const { t, f } = ctx.state;
    const message = state.state === 'used' ? t('reset.used') : state.state === 'expired' ? t('reset.expired', { time: f.dateTime(state.expiredAt) }) : t('reset.invalid');
    ctx.status = 404;
    ctx.body = resetPage(ctx.state, token, html`${notice(message, 'bad')}
      <p><a class="btn btn-primary" href="/sign-in">${t('auth.signIn')}</a></p>`);
  };

  router.get('/password-reset/:token', async (ctx) => {
    const token = ctx.params.token!;
    const state = await findPasswordReset(db, token);
    if (state.state !== 'open') return closed(ctx, token, state);
    ctx.body = resetPage(ctx.state, token, resetForm(ctx.state, token, state.email));
  });

  router.post('/password-reset/:token', async (ctx) => {
    const { t } = ctx.state;
    const token = ctx.params.token!;
    const { newPassword = '', confirmPassword = '' } = ctx.state.form;
    const result = await resetPassword(db, { token, newPassword, confirmPassword, ip: ctx.ip || null });
    if (!result.ok && result.reason === 'closed') return closed(ctx, token, result.state);
    if (!result.ok) {
      ctx.status = 422;
      // Neither password comes back; why each was refused, under it.
      ctx.body = resetPage(ctx.state, token, html`${notice(t('error.invalid', { message: invalidInputMessage(ctx.state, result.error) }), 'bad')}
        ${resetForm(ctx.state, token, result.email, fieldRefusals(ctx.state, result.error))}`);
      return;
    }
    // Signed in with the new password, the usual way (its bound on password checks and all):
    // every session the person had was just ended, this browser's included.
    const signedIn = await signIn(db, {
      email: result.email, password: newPassword, ip: ctx.ip || null, device: deviceTokenFor(ctx, result.email), limits: deps.signInLimits, passwordChecks: deps.passwordChecks,
    });
    ctx.status = 303;
    if (!signedIn.ok) return ctx.redirect('/sign-in?done=reset');
    setSessionCookie(ctx, signedIn.session, deps.secureCookies);
    rememberDevice(ctx, signedIn.email, signedIn.device, deps.secureCookies);
    ctx.redirect('/account/password?done=reset');
  });
}
