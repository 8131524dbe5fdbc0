import { AppError } from '../errors/index.js';
import { API_KEY_SECRET_LENGTH, type KeyKind } from './api-key-format.js';

// invalid_api_key worded for the one problem it is, where naming it tells the caller nothing
// they do not hold already: a token that is not a key at all, or a key of ours (its secret is
// the proof) that was revoked, expired or is a personal one. A well-formed key we do not know
// keeps the catalogue's message: nothing is said about keys the caller cannot show.

const KEY_PREFIX = /^sk_(?:live|test)_/;
const ALPHANUMERIC = /^[0-9A-Za-z]*$/;

/** A bearer token not shaped like a key; a key cut or padded when copied says how long it is. */
export function notKeyShaped(token: string): AppError {
  const shape = `keys are sk_live_ or sk_test_ followed by ${API_KEY_SECRET_LENGTH} letters and digits`;
  const prefix = KEY_PREFIX.exec(token)?.[0];
  const secret = prefix === undefined ? undefined : token.slice(prefix.length);
  const copied = secret !== undefined && ALPHANUMERIC.test(secret)
    ? ` (this one has ${secret.length} after ${prefix}: copy the whole key)`
    : '';
  return new AppError('invalid_api_key', `The bearer token does not look like an API key: ${shape}${copied}.`);
}

/** A minute in UTC, as a person reads it: `2026-11-20 14:03 UTC`. */
const utcMinute = (ms: number) => `${new Date(ms).toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/** A personal key where an organization key is required (the API, the tool server's key connection). */
export const personalKey = () =>
  new AppError('invalid_api_key', 'This is a personal API key: the API and the tool server take organization keys only. Use an organization key (dashboard, API keys).');

/** Why a key on file is refused, or undefined when it is not; revocation first, as key lists show it. */
export function refusedKey(key: { kind: KeyKind; revokedAt: number | null; expiresAt: number | null }, now: number): AppError | undefined {
  if (key.revokedAt !== null) return new AppError('invalid_api_key', `This API key was revoked on ${utcMinute(key.revokedAt)}. Use another key of the organization, or have an admin create one in the dashboard.`);
  if (key.expiresAt !== null && key.expiresAt <= now) {
    return new AppError('invalid_api_key', `This API key expired on ${utcMinute(key.expiresAt)}. If it was rotated, use its replacement; otherwise have an admin create a key in the dashboard.`);
  }
  if (key.kind !== 'organization') return personalKey();
  return undefined;
}
