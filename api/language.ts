import type { ParameterizedContext } from 'koa';
import type { Language } from '../core/companies/endpoint-catalogue.js';

/** `?lang=it|en` (any case; the first, if repeated) wins; otherwise Accept-Language; English by default. */
export function requestLanguage(ctx: ParameterizedContext): Language {
  const raw = ctx.query.lang;
  const lang = (Array.isArray(raw) ? raw[0] : raw)?.toLowerCase();
  if (lang === 'it' || lang === 'en') return lang;
  if (!ctx.get('Accept-Language')) return 'en';
  return ctx.acceptsLanguages('en', 'it') === 'it' ? 'it' : 'en';
}
