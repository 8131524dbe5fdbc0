import type { Middleware } from 'koa';
import type { DashboardState } from '../state.js';

// A form refused (422) comes back as its page with the "Please check the form" summary
// (role=alert) above it. A screen reader or keyboard user is left where they pressed the button,
// at the foot of the form; so the summary takes the focus (tabindex=-1 and autofocus: no script,
// which the CSP's script-src 'self' would refuse inline anyway), and the title starts with
// "Error: " ("Errore: "), which is read first when the page loads. Done here, once, for every
// form's 422 page, rather than in each route that draws one; and for the sign-in's refusals,
// a wrong e-mail or password (401) and too many tries (429), whose summary is the same.

const SUMMARY = /<div class="notice notice-bad" role="alert"/;

export function refusedFormPage(): Middleware<DashboardState> {
  return async (ctx, next) => {
    await next();
    const refused = ctx.status === 422 || (ctx.method === 'POST' && (ctx.status === 401 || ctx.status === 429));
    if (!refused || typeof ctx.body !== 'string' || !ctx.body.startsWith('<!doctype html>')) return;
    const prefix = ctx.state.t('error.titlePrefix');
    ctx.body = ctx.body.replace('<title>', `<title>${prefix}`).replace(SUMMARY, (summary) => `${summary} tabindex="-1" autofocus`);
  };
}
