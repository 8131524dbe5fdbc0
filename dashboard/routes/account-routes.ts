import type { Router } from '@koa/router';
import { changePassword, MIN_PASSWORD_LENGTH, type SignInLimits } from '../../core/dashboard-auth/index.js';
import type { PasswordCheckSlots } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import { deviceTokenFor, rememberDevice } from '../device-cookie.js';
import { setSessionCookie } from '../middleware/cookies.js';
import { answerRepeated, claimSubmission, submissionField, submissionUsed } from '../form-submission.js';
import type { DashboardState } from '../state.js';
import { csrfField, field, notice } from '../views/components.js';
import { html, type HtmlValue } from '../views/html.js';
import { fieldRefusals, invalidInputMessage } from '../views/invalid-input.js';
import { page } from '../views/layout.js';

export interface AccountRouteDeps {
  db: Db;
  secureCookies: boolean;
  signInLimits?: SignInLimits;
  /** The sign-in's slots: a password change's check of the current password is one of them. */
  passwordChecks: PasswordCheckSlots;
}

const PATH = '/account/password';

function passwordPage(state: DashboardState, options: { banner?: HtmlValue; refusals?: Partial<Record<string, string>> } = {}): string {
  const { t } = state;
  const refusals = options.refusals ?? {};
  const user = state.session!.user;
  return page(state, {
    title: t('account.passwordTitle'),
    path: PATH,
    banners: options.banner,
    body: html`<form method="post" action="${PATH}" class="stack narrow" data-submit-once>
      ${csrfField(state)}${submissionField()}
      ${field({ label: t('auth.email'), name: 'email_display', type: 'email', value: user.email, autocomplete: 'username', id: 'account-email', readonly: true })}
      ${field({ label: t('account.currentPassword'), name: 'currentPassword', type: 'password', required: true, autocomplete: 'current-password', id: 'current-password', error: refusals.currentPassword })}
      ${field({ label: t('account.newPassword'), name: 'newPassword', type: 'password', required: true, autocomplete: 'new-password', id: 'new-password', help: t('account.passwordHelp', { n: MIN_PASSWORD_LENGTH }), error: refusals.newPassword })}
      ${field({ label: t('account.confirmPassword'), name: 'confirmPassword', type: 'password', required: true, autocomplete: 'new-password', id: 'confirm-password', error: refusals.confirmPassword })}
      <button type="submit" class="btn btn-primary">${t('account.changePassword')}</button>
    </form>`,
  });
}

/**
 * "Change password", for every signed-in person (operators, admins, finance). The passwords
 * typed never come back in the page. A change ends every session and trusted browser of the
 * person (core/dashboard-auth/change-password.ts); this browser carries on with a new session
 * cookie and is trusted afresh.
 */
export function registerAccountRoutes(router: Router<DashboardState>, deps: AccountRouteDeps): void {
  const { db } = deps;

  router.get(PATH, (ctx) => {
    const { t } = ctx.state;
    const done = ctx.query.done;
    const banner = done === 'changed' ? notice(t('account.changed'), 'good') : done === 'reset' ? notice(t('account.reset'), 'good') : done === 'repeated' ? notice(t('account.repeated'), 'info') : undefined;
    ctx.body = passwordPage(ctx.state, { banner });
  });

  router.post(PATH, async (ctx) => {
    const { t } = ctx.state;
    const user = ctx.state.session!.user;
    // Sent again (a double-click) after the first one changed it: the current password typed
    // is now the old one, and would be refused and counted as a wrong guess.
    if (await submissionUsed(db, ctx)) return answerRepeated(db, ctx, PATH);
    const form = ctx.state.form;
    const result = await changePassword(db, {
      userId: user.id,
      email: user.email,
      currentPassword: form.currentPassword ?? '',
      newPassword: form.newPassword ?? '',
      confirmPassword: form.confirmPassword ?? '',
      sessionToken: ctx.state.sessionToken!,
      ip: ctx.ip || null,
      device: deviceTokenFor(ctx, user.email),
      limits: deps.signInLimits,
      passwordChecks: deps.passwordChecks,
    });
    if (!result.ok) {
      if (result.reason === 'changed_meanwhile') return answerRepeated(db, ctx, PATH);
      // Refused as every form is: the "Please check the form" summary (role=alert) naming each
      // field, and why under the field.
      if (result.reason === 'invalid_params') {
        ctx.status = 422;
        ctx.body = passwordPage(ctx.state, {
          banner: notice(t('error.invalid', { message: invalidInputMessage(ctx.state, result.error) }), 'bad'),
          refusals: fieldRefusals(ctx.state, result.error),
        });
      } else if (result.reason === 'invalid') {
        ctx.status = 422;
        ctx.body = passwordPage(ctx.state, {
          banner: notice(t('error.invalid', { message: `${t('account.currentPassword')}: ${t('account.currentWrong')}` }), 'bad'),
          refusals: { currentPassword: t('account.currentWrong') },
        });
      } else {
        ctx.status = 429;
        ctx.set('Retry-After', String(result.retryAfterSeconds));
        const minutes = Math.ceil(result.retryAfterSeconds / 60);
        const message = result.reason === 'locked' ? t('account.locked', { minutes }) : result.reason === 'addressLocked' ? t('auth.addressLocked', { minutes }) : t('auth.busy');
        ctx.body = passwordPage(ctx.state, { banner: notice(message, 'bad') });
      }
      return;
    }
    // This session carries on under a new token: the browser gets it now. A repeat sent with
    // the new cookie finds this form's token used; one already on its way with the old cookie
    // is refused as a stale form (403), whose page says to reload.
    setSessionCookie(ctx, result.session, deps.secureCookies);
    ctx.state.sessionToken = result.session.token;
    await claimSubmission(db, ctx);
    rememberDevice(ctx, result.email, result.device, deps.secureCookies);
    ctx.status = 303;
    ctx.redirect(`${PATH}?done=changed`);
  });
}
