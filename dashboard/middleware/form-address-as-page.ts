import type { Router } from '@koa/router';
import type { Middleware } from 'koa';
import type { DashboardState } from '../state.js';

// A form's own address, opened as a page: a refused form is answered at the address it was sent
// to (/orgs/…/members/usr_…/role), and Enter in the address bar, or the address opened again
// later, asked for it with GET, which only the form's POST answers: "This page does not exist".
// Such a request goes to the nearest address above it that is a page: for most forms the page
// they are on (an invitation's Cancel, on Members, goes to the organization's overview).

/** 303 to the nearest page above a path that only a form answers; otherwise on to the routes. */
export function formAddressAsPage(router: Router<DashboardState>): Middleware<DashboardState> {
  return async (ctx, next) => {
    if (ctx.method !== 'GET' || router.match(ctx.path, 'GET').route || !router.match(ctx.path, 'POST').route) return next();
    // Built from the path's segments, so it starts with one slash: never another site's address.
    const segments = ctx.path.split('/').filter((s) => s !== '');
    for (let n = segments.length - 1; n >= 0; n--) {
      const page = `/${segments.slice(0, n).join('/')}`;
      if (router.match(page, 'GET').route) {
        ctx.status = 303;
        return ctx.redirect(page);
      }
    }
    return next();
  };
}
