import type { ParameterizedContext } from 'koa';
import type { Language } from '../core/companies/endpoint-catalogue.js';

/** `?lang=it|en` wins; otherwise Accept-Language; English by default. */
export function requestLanguage(ctx: ParameterizedContext): Language {
  const lang = ctx.query.lang;
  if (lang === 'it' || lang === 'en') return lang;
  if (!ctx.get('Accept-Language')) return 'en';
  return ctx.acceptsLanguages('en', 'it') === 'it' ? 'it' : 'en';
}
