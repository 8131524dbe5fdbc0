import type { Middleware } from 'koa';
import { formats, pickLanguage, translator } from '../i18n/translate.js';
import type { DashboardState } from '../state.js';
import { LANGUAGE_COOKIE, readCookie } from './cookies.js';

export function language(): Middleware<DashboardState> {
  return async (ctx, next) => {
    const lang = pickLanguage(readCookie(ctx, LANGUAGE_COOKIE), ctx.get('Accept-Language'));
    ctx.state.lang = lang;
    ctx.state.t = translator(lang);
    ctx.state.f = formats(lang);
    await next();
  };
}
