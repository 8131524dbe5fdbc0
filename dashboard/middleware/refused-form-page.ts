import type { Middleware } from 'koa';
import type { DashboardState } from '../state.js';

// A form refused (422) comes back as its page with the "Please check the form" summary
// (role=alert) above it. A screen reader or keyboard user is left where they pressed the button,
// at the foot of the form; so the summary takes the focus (tabindex=-1 and autofocus: no script,
// which the CSP's script-src 'self' would refuse inline anyway), and the title starts with
// "Error: " ("Errore: "), which is read first when the page loads. Done here, once, for every
// form's 422 page, rather than in each route that draws one.

const SUMMARY = /<div class="notice notice-bad" role="alert"/;

export function refusedFormPage(): Middleware<DashboardState> {
  return async (ctx, next) => {
    await next();
    if (ctx.status !== 422 || typeof ctx.body !== 'string' || !ctx.body.startsWith('<!doctype html>')) return;
    const prefix = ctx.state.t('error.titlePrefix');
    ctx.body = ctx.body.replace('<title>', `<title>${prefix}`).replace(SUMMARY, (summary) => `${summary} tabindex="-1" autofocus`);
  };
}
