import type { Db } from '../db/index.js';
import { hashToken, newSecretToken } from './secret-token.js';

// Browsers a person has signed in from (OWASP's "device cookies"). A browser that presents the
// secret it was given for an e-mail is judged on its own failures, not by the lock that wrong
// passwords from anywhere put on that e-mail: so whoever knows an e-mail cannot keep its owner
// out of the browsers they use. Guessing stays bounded: a trusted browser is forgotten after
// `maxDeviceFailures` wrong passwords without a success in between, and only a right password
// makes a new one.

/** How long a browser stays trusted without signing in again (each sign-in trusts it afresh). */
export const DEVICE_TRUST_TTL_MS = 90 * 24 * 60 * 60 * 1000;

// A person's browsers, newest first, beyond which the oldest are forgotten: more are private
// windows and cleared cookies, whose secrets nobody holds any more.
const MAX_DEVICES_PER_USER = 10;

export interface TrustedDevice {
  /** Goes in the cookie; only its hash is stored. */
  token: string;
  expiresAt: Date;
}

/**
 * The stored id of the browser `token` vouches for, if it still vouches for `email`: the
 * token's person has that e-mail, is not disabled, has not set a new password since, and the
 * trust has not expired. Another person's token, a forged one or a forgotten one: undefined.
 */
export async function trustedDeviceFor(db: Db, token: string, email: string, now: Date): Promise<string | undefined> {
  const idHash = hashToken(token);
  const row = await db('trusted_devices as d')
    .join('users as u', 'u.id', 'd.user_id')
    .where('d.id_hash', idHash)
    .whereRaw('lower(u.email) = ?', [email])
    .whereNull('u.disabled_at')
    .andWhere('d.expires_at', '>', now)
    .first<{ password_digest: string; password_hash: string | null } | undefined>('d.password_digest', 'u.password_hash');
  if (!row?.password_hash || hashToken(row.password_hash) !== row.password_digest) return undefined;
  return idHash;
}

/**
 * Trusts a browser that has just signed in as `userId` with the password whose stored hash is
 * `passwordHash`; `replacing` (the id of the one it presented) is forgotten, so a copy of the
 * old cookie is worth nothing once its browser signs in again.
 */
export async function trustDevice(db: Db, input: { userId: string; passwordHash: string; replacing?: string | null; now: Date }): Promise<TrustedDevice> {
  const token = newSecretToken();
  const expiresAt = new Date(input.now.getTime() + DEVICE_TRUST_TTL_MS);
  await db.transaction(async (trx) => {
    if (input.replacing) await trx('trusted_devices').where({ id_hash: input.replacing, user_id: input.userId }).delete();
    await trx('trusted_devices').insert({ id_hash: hashToken(token), user_id: input.userId, password_digest: hashToken(input.passwordHash), created_at: input.now, expires_at: expiresAt });
    await trx('trusted_devices').where({ user_id: input.userId }).andWhere('expires_at', '<=', input.now).delete();
    await trx.raw(
      `DELETE FROM trusted_devices WHERE user_id = ? AND id_hash NOT IN (
         SELECT id_hash FROM trusted_devices WHERE user_id = ? ORDER BY created_at DESC, id_hash LIMIT ?)`,
      [input.userId, input.userId, MAX_DEVICES_PER_USER],
    );
  });
  return { token, expiresAt };
}

/** Stops trusting one browser (by its stored id). */
export async function forgetDevice(db: Db, idHash: string): Promise<void> {
  await db('trusted_devices').where({ id_hash: idHash }).delete();
}

/** Stops trusting every browser of the person but the one whose cookie holds `keepToken`. */
export async function forgetOtherDevices(db: Db, userId: string, keepToken?: string): Promise<number> {
  const query = db('trusted_devices').where({ user_id: userId });
  if (keepToken) query.whereNot({ id_hash: hashToken(keepToken) });
  return query.delete();
}
