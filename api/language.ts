import type { ParameterizedContext } from 'koa';
import type { Language } from '../core/companies/endpoint-catalogue.js';

/**
 * `?lang=` (any case; the first, if repeated) wins, read as a language tag as Accept-Language is:
 * `it`, `it-IT` and `it_CH` are Italian, `en-GB` English. Otherwise Accept-Language; English by default.
 */
export function requestLanguage(ctx: ParameterizedContext): Language {
  const raw = ctx.query.lang;
  const lang = (Array.isArray(raw) ? raw[0] : raw)?.toLowerCase().split(/[-_]/)[0];
  if (lang === 'it' || lang === 'en') return lang;
  if (!ctx.get('Accept-Language')) return 'en';
  return ctx.acceptsLanguages('en', 'it') === 'it' ? 'it' : 'en';
}
