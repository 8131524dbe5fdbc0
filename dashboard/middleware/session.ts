import { timingSafeEqual } from 'node:crypto';
import type { Middleware } from 'koa';
import { newSecretToken, readSession } from '../../core/dashboard-auth/index.js';
import type { Db } from '../../core/db/index.js';
import type { DashboardState } from '../state.js';
import { PRE_SESSION_CSRF_COOKIE, readCookie, SESSION_COOKIE, setCookie } from './cookies.js';

/** Loads the session named by the cookie (if live) and the CSRF token forms must carry. */
export function loadSession(deps: { db: Db; secureCookies: boolean }): Middleware<DashboardState> {
  return async (ctx, next) => {
    const token = readCookie(ctx, SESSION_COOKIE);
    if (token) {
      const session = await readSession(deps.db, token);
      if (session) {
        ctx.state.session = session;
        ctx.state.sessionToken = token;
      } else {
        setCookie(ctx, SESSION_COOKIE, '', { secure: deps.secureCookies, maxAge: 0 });
      }
    }
    if (ctx.state.session) {
      ctx.state.csrfToken = ctx.state.session.csrfToken;
    } else {
      // Before sign-in there is no session to hold the token: a cookie holds it (double submit),
      // so a third-party page cannot sign a browser in to an account of its choosing.
      let pre = readCookie(ctx, PRE_SESSION_CSRF_COOKIE);
      if (!pre || pre.length < 32) {
        pre = newSecretToken();
        setCookie(ctx, PRE_SESSION_CSRF_COOKIE, pre, { secure: deps.secureCookies });
      }
      ctx.state.csrfToken = pre;
    }
    await next();
  };
}

/** Every POST must carry the token of its session (or pre-session cookie) in `_csrf`. */
export function requireCsrf(): Middleware<DashboardState> {
  return async (ctx, next) => {
    if (ctx.method === 'POST') {
      const sent = Buffer.from(ctx.state.form._csrf ?? '');
      const expected = Buffer.from(ctx.state.csrfToken);
      if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) ctx.throw(403, 'csrf');
    }
    await next();
  };
}
