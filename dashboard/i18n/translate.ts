import { en, type MessageKey } from './messages-en.js';
import { elideArticles } from './italian-articles.js';
import { it } from './messages-it.js';

export const languages = ['en', 'it'] as const;
export type Language = (typeof languages)[number];
export type { MessageKey };

/**
 * Of a message with a singular and a plural form, `params.count` (a number) picks one. `count`
 * itself is not shown: the numbers a message shows come formatted, in params of their own.
 */
export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

/** A message said differently of one thing and of several ("1 credit", "2 credits"). */
export interface PluralMessage {
  one: string;
  other: string;
}

/** A language's messages: a message with plural forms in English has them in every language. */
export type Catalogue = { [K in MessageKey]: (typeof en)[K] extends string ? string : PluralMessage };

const catalogues: Record<Language, Catalogue> = { en, it };

export function translator(lang: Language): Translate {
  const messages = catalogues[lang];
  const plurals = new Intl.PluralRules(lang);
  return (key, params) => {
    const message: string | PluralMessage = messages[key] ?? en[key];
    // Italian's rules also name 'many' (a million, ...): that is the plural form too.
    const chosen = typeof message === 'string' ? message : plurals.select(Number(params?.count ?? 0)) === 'one' ? message.one : message.other;
    const text = lang === 'it' && params ? elideArticles(chosen, params) : chosen;
    return params ? text.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m)) : text;
  };
}

export function isLanguage(value: unknown): value is Language {
  return typeof value === 'string' && (languages as readonly string[]).includes(value);
}

/** The cookie wins; otherwise the browser's first preference we speak; otherwise English. */
export function pickLanguage(cookie: string | undefined, acceptLanguage: string | undefined): Language {
  if (isLanguage(cookie)) return cookie;
  for (const part of (acceptLanguage ?? '').split(',')) {
    const tag = part.trim().slice(0, 2).toLowerCase();
    if (isLanguage(tag)) return tag;
  }
  return 'en';
}

/** Dates and numbers the way each language writes them; always UTC, as the billing periods are. */
export function formats(lang: Language) {
  const locale = lang === 'it' ? 'it-IT' : 'en-GB';
  // Grouped from four digits in both languages: Italian's default leaves 1013 ungrouped next to
  // 100.000 in the same column.
  const number = new Intl.NumberFormat(locale, { useGrouping: 'always' } as Intl.NumberFormatOptions);
  const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
  const date = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeZone: 'UTC' });
  const month = new Intl.DateTimeFormat(locale, { month: 'long', year: 'numeric', timeZone: 'UTC' });
  const dayMonth = new Intl.DateTimeFormat(locale, { day: 'numeric', month: 'short', timeZone: 'UTC' });
  return {
    number: (n: number) => number.format(n),
    dateTime: (d: Date) => `${dateTime.format(d)} UTC`,
    date: (d: Date) => date.format(d),
    /** A day without its year, for a chart's axis: "27 Nov", "27 nov" (not 11-27, which an Italian reads as 11 January). */
    dayMonth: (d: Date) => dayMonth.format(d),
    /** A UTC day given as YYYY-MM-DD, written as the pages write dates ("27 Nov 2026"). */
    day: (day: string) => date.format(new Date(`${day}T00:00:00Z`)),
    period: (p: string) => month.format(new Date(`${p}-01T00:00:00Z`)),
  };
}
export type Formats = ReturnType<typeof formats>;
