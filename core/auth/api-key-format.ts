import { createHash } from 'node:crypto';
import { randomBase62 } from '../ids/index.js';

export type KeyMode = 'live' | 'test';
export type KeyKind = 'organization' | 'personal';

// sk_live_ / sk_test_ + 32 base62 characters: about 190 bits of entropy, so a plain SHA-256
// (no salt, no slow hash) is enough to store it, and lets us look a key up by its hash.
export const API_KEY_SECRET_LENGTH = 32;
// One shape for a whole key, for one inside text (a URL), for each of them (to redact), and for
// the OpenAPI document's bearerFormat.
export const API_KEY_SHAPE = `sk_(live|test)_[0-9A-Za-z]{${API_KEY_SECRET_LENGTH}}`;
const API_KEY_PATTERN = new RegExp(`^${API_KEY_SHAPE}$`);
const KEY_IN_TEXT = new RegExp(API_KEY_SHAPE);
const KEYS_IN_TEXT = new RegExp(API_KEY_SHAPE, 'g');
// A whole key within pasted text: not part of a longer run of key characters.
const WHOLE_KEY_IN_TEXT = new RegExp(`(?<![0-9A-Za-z_])${API_KEY_SHAPE}(?![0-9A-Za-z])`);
/** Enough to recognise a key in a list without weakening it: the mode and 4 secret characters. */
const DISPLAY_PREFIX_LENGTH = 12;

export function generateApiKey(mode: KeyMode): string {
  return `sk_${mode}_${randomBase62(API_KEY_SECRET_LENGTH)}`;
}

export function isApiKeyShaped(token: string): boolean {
  return API_KEY_PATTERN.test(token);
}

/** Whether text (a URL, a path) holds something shaped like a key. Cheap when it does not. */
export function containsApiKey(text: string): boolean {
  return text.includes('sk_') && KEY_IN_TEXT.test(text);
}

/**
 * The key within pasted text (`Authorization: Bearer sk_…`, a quoted or space-padded copy, a
 * log line): its first whole key-shaped part, if any.
 */
export function apiKeyIn(text: string): string | undefined {
  return text.includes('sk_') ? WHOLE_KEY_IN_TEXT.exec(text)?.[0] : undefined;
}

/** The text with each key-shaped part replaced by `sk_<mode>_[redacted]`: for what is logged. */
export function withoutApiKeys(text: string): string {
  return text.includes('sk_') ? text.replace(KEYS_IN_TEXT, 'sk_$1_[redacted]') : text;
}

/**
 * A URL or path as sent with its percent-escapes of ASCII characters decoded: a key is ASCII, and
 * `sk_live_%6C…` is a key all the same to whoever reads the URL later (a server decodes it). Only
 * ASCII escapes, one at a time, so that a malformed or partial UTF-8 sequence (which would make
 * decodeURIComponent throw) stays as it was; linear in the text's length.
 */
function asciiDecoded(url: string): string {
  return url.replace(/%([0-7][0-9A-Fa-f])/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** `containsApiKey` for a URL or path as sent: a percent-encoded key counts too. */
export function urlContainsApiKey(url: string): boolean {
  return containsApiKey(url) || (url.includes('%') && containsApiKey(asciiDecoded(url)));
}

/** `withoutApiKeys` for a URL or path as sent: one holding a key, percent-encoded or not, is
 * written with its ASCII escapes decoded and the keys redacted, so no key is written encoded. */
export function withoutApiKeysInUrl(url: string): string {
  if (!url.includes('%')) return withoutApiKeys(url);
  const decoded = asciiDecoded(url);
  return containsApiKey(decoded) ? withoutApiKeys(decoded) : url;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}
