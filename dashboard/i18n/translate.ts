import { en, type MessageKey } from './messages-en.js';
import { it } from './messages-it.js';

export const languages = ['en', 'it'] as const;
export type Language = (typeof languages)[number];
export type { MessageKey };

export type Translate = (key: MessageKey, params?: Record<string, string | number>) => string;

const catalogues: Record<Language, Record<MessageKey, string>> = { en, it };

export function translator(lang: Language): Translate {
  const messages = catalogues[lang];
  return (key, params) => {
    const text = messages[key] ?? en[key];
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
  return {
    number: (n: number) => number.format(n),
    dateTime: (d: Date) => `${dateTime.format(d)} UTC`,
    date: (d: Date) => date.format(d),
    period: (p: string) => month.format(new Date(`${p}-01T00:00:00Z`)),
  };
}
export type Formats = ReturnType<typeof formats>;
