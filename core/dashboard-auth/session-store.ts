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

export async function createSession(db: Db, userId: string, now = new Date()): Promise<CreatedSession> {
  const token = newSecretToken();
  const csrfToken = newSecretToken();
  const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
  await db('sessions').insert({ id_hash: hashToken(token), user_id: userId, csrf_token: csrfToken, created_at: now, expires_at: expiresAt });
  return { token, csrfToken, expiresAt };
}

/** The live session of a cookie value: not expired, not signed out, user not disabled. */
export async function readSession(db: Db, token: string, now = new Date()): Promise<Session | undefined> {
  const row = await db('sessions as s')
    .join('users as u', 'u.id', 's.user_id')
    .where('s.id_hash', hashToken(token))
    .whereNull('s.revoked_at')
    .whereNull('u.disabled_at')
    .andWhere('s.expires_at', '>', now)
    .first<{ id: string; email: string; name: string | null; is_operator: boolean; csrf_token: string; expires_at: Date } | undefined>(
      'u.id', 'u.email', 'u.name', 'u.is_operator', 's.csrf_token', 's.expires_at',
    );
  if (!row) return undefined;
  return { user: { id: row.id, email: row.email, name: row.name, isOperator: row.is_operator }, csrfToken: row.csrf_token, expiresAt: row.expires_at };
}

export async function endSession(db: Db, token: string): Promise<void> {
  await db('sessions').where({ id_hash: hashToken(token) }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}

/** "Sign out everywhere": every session of the user, this one included. */
export async function endAllSessions(db: Db, userId: string): Promise<number> {
  return db('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: db.fn.now() });
}
