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

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, DISPLAY_PREFIX_LENGTH);
}
