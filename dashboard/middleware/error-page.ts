import type { Middleware } from 'koa';
import { isAppError } from '../../core/errors/index.js';
import type { Logger } from '../../core/logging/index.js';
import { OrganizationRefused } from '../org-access.js';
import { redactDashboardPath } from './request-log.js';
import type { DashboardState } from '../state.js';
import { notice } from '../views/components.js';
import { invalidInputMessage, PERIOD_MESSAGE } from '../views/invalid-input.js';
import { html } from '../views/html.js';
import { bareLayout, page } from '../views/layout.js';
import { organizationRefusalPage } from '../views/organization-refusal.js';

/**
 * Every failure becomes a page in the person's language. Nothing internal is shown: a 404
 * says the same whether the thing does not exist or belongs to someone else.
 */
export function errorPage(logger: Logger): Middleware<DashboardState> {
  return async (ctx, next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) ctx.throw(404);
    } catch (err) {
      // A member turned away by their role, or a former member: said as such, with where to go.
      if (err instanceof OrganizationRefused && ctx.state.session) {
        ctx.status = err.status;
        ctx.type = 'html';
        ctx.body = organizationRefusalPage(ctx.state, err.refusal, ctx.url);
        return;
      }
      const status = isAppError(err) ? err.status : typeof (err as { status?: unknown }).status === 'number' ? (err as { status: number }).status : 500;
      const message = (err as { message?: string }).message;
      const t = ctx.state.t;
      let text: string;
      if (status === 404) text = t('error.notFound');
      else if (status === 403) text = message === 'csrf' ? t('error.csrf') : t('error.forbidden');
      else if (status === 413) text = t('error.tooLarge');
      else if (isAppError(err) && err.code === 'invalid_params') text = t('error.invalid', { message: invalidInputMessage(ctx.state, err) });
      else if (status < 500 && (err as { expose?: boolean }).expose && message) text = message;
      else {
        logger.error('dashboard request failed', { err, method: ctx.method, path: redactDashboardPath(ctx.path), requestId: ctx.state.requestId });
        text = t('error.internal');
      }
      ctx.status = status >= 400 && status < 600 ? status : 500;
      ctx.type = 'html';
      const body = html`${notice(text, 'bad')}<p><a class="btn btn-secondary" href="/">${t('error.back')}</a></p>`;
      // A refusal or a missing page is not a failure: its heading says which it is. So is a
      // finance page's month that is not begun (or not a month): nothing went wrong.
      const periodRefused = isAppError(err) && err.code === 'invalid_params' && err.details?.some((d) => d.path === 'period' && d.message === PERIOD_MESSAGE) === true;
      const title = ctx.status === 404 ? t('error.titleNotFound')
        : ctx.status === 403 && message !== 'csrf' ? t('error.titleForbidden')
          : periodRefused ? t('error.titlePeriod') : t('error.title');
      ctx.body = ctx.state.session
        ? page(ctx.state, { title, body, path: ctx.url })
        : bareLayout(ctx.state, { title, body, path: ctx.url });
    }
  };
}
