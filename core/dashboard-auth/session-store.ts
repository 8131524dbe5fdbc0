import type { Db } from '../db/index.js';
import { hashToken, newSecretToken } from './secret-token.js';

export interface SessionUser {
  id: string;
  email: string;
  name: string | null;
  isOperator: boolean;
}

export interface Session {
  user: SessionUser;
  csrfToken: string;
  expiresAt: Date;
}

export interface CreatedSession {
  /** Goes in the cookie; only its hash is stored. */
  token: string;
  csrfToken: string;
  expiresAt: Date;
}

export const SESSION_TTL_MS = 12 * 60 * 60 * 1000;

/**
 * A new session of `userId`, bound to the password it was opened with (`passwordHash`, the
 * stored hash that was just checked): once the person has another password, it is not read.
 */
export async function createSession(db: Db, input: { userId: string; passwordHash: string; now?: Date }): Promise<CreatedSession> {
  const now = input.now ?? new Date();
  const token = newSecretToken();
  const csrfToken = newSecretToken();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await db('sessions').insert({
    id_hash: hashToken(token), user_id: input.userId, csrf_token: csrfToken, created_at: now, expires_at: expiresAt, password_digest: hashToken(input.passwordHash),
  });
  return { token, csrfToken, expiresAt };
}

/**
 * The live session of `token` under a new token, bound to `passwordHash` (a password change): a
 * copy of the old cookie opens nothing, while what the session holds (its CSRF token, the forms
 * it has seen sent, its flashes) carries on. Undefined when that session is no longer live.
 */
export async function rotateSession(db: Db, input: { token: string; passwordHash: string; now?: Date }): Promise<CreatedSession | undefined> {
  const token = newSecretToken();
  const [row] = await db('sessions')
    .where({ id_hash: hashToken(input.token) })
    .whereNull('revoked_at')
    .andWhere('expires_at', '>', input.now ?? new Date())
    .update({ id_hash: hashToken(token), password_digest: hashToken(input.passwordHash) })
    .returning<{ csrf_token: string; expires_at: Date }[]>(['csrf_token', 'expires_at']);
  return row ? { token, csrfToken: row.csrf_token, expiresAt: row.expires_at } : undefined;
}

/**
 * The live session of a cookie value: not expired, not signed out, user not disabled, and opened
 * with the password the user has now (a session without a digest predates that rule: migration 029).
 */
export async function readSession(db: Db, token: string, now = new Date()): Promise<Session | undefined> {
  const row = await db('sessions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where('s.id_hash', hashToken(token))
    .whereNull('s.revoked_at')
    .whereNull('u.disabled_at')
    .andWhere('s.expires_at', '>', now)
    .first<
      | { id: string; email: string; name: string | null; is_operator: boolean; csrf_token: string; expires_at: Date; password_digest: string | null; password_hash: string | null }
      | undefined
    >('u.id', 'u.email', 'u.name', 'u.is_operator', 's.csrf_token', 's.expires_at', 's.password_digest', 'u.password_hash');
  if (!row) return undefined;
  if (row.password_digest !== null && (row.password_hash === null || hashToken(row.password_hash) !== row.password_digest)) return undefined;
  return { user: { id: row.id, email: row.email, name: row.name, isOperator: row.is_operator }, csrfToken: row.csrf_token, expiresAt: row.expires_at };
}

export async function endSession(db: Db, token: string): Promise<void> {
  await db('sessions').where({ id_hash: hashToken(token) }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}

/** "Sign out everywhere": every session of the user, this one included. */
export async function endAllSessions(db: Db, userId: string): Promise<number> {
  return db('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}
