import type { Db } from '../db/index.js';
import { verifyPassword } from './password-hash.js';
import { createSession, type CreatedSession } from './session-store.js';

export interface SignInLimits {
  /** Failed attempts per e-mail allowed inside the window before we stop checking passwords. */
  maxFailures: number;
  windowMs: number;
}

export const defaultSignInLimits: SignInLimits = { maxFailures: 5, windowMs: 15 * 60 * 1000 };

export type SignInResult =
  | { ok: true; userId: string; session: CreatedSession }
  | { ok: false; reason: 'invalid' }
  | { ok: false; reason: 'locked'; retryAfterSeconds: number };

/**
 * E-mail + password. Failures are counted per e-mail (any IP) since the last success: past the
 * limit we answer "locked" without running the password check, so guessing is bounded no matter
 * how many addresses the guesser uses. Unknown e-mails are counted and timed like known ones.
 */
export async function signIn(
  db: Db,
  input: { email: string; password: string; ip: string | null; now?: Date; limits?: SignInLimits },
): Promise<SignInResult> {
  const now = input.now ?? new Date();
  const limits = input.limits ?? defaultSignInLimits;
  const email = input.email.trim().toLowerCase();
  const since = new Date(now.getTime() - limits.windowMs);

  const lastSuccess = await db('sign_in_attempts').whereRaw('lower(email) = ?', [email]).andWhere({ succeeded: true }).max<{ at: Date | null }>({ at: 'at' }).first();
  const from = lastSuccess?.at && lastSuccess.at > since ? lastSuccess.at : since;
  const failures = await db('sign_in_attempts')
    .whereRaw('lower(email) = ?', [email])
    .andWhere({ succeeded: false })
    .andWhere('at', '>', from)
    .orderBy('at', 'asc')
    .select<{ at: Date }[]>('at');
  if (failures.length >= limits.maxFailures) {
    const oldestCounted = failures[failures.length - limits.maxFailures]!.at;
    const retryAfterSeconds = Math.max(1, Math.ceil((oldestCounted.getTime() + limits.windowMs - now.getTime()) / 1000));
    return { ok: false, reason: 'locked', retryAfterSeconds };
  }

  const user = await db('users').whereRaw('lower(email) = ?', [email]).whereNull('disabled_at').first<{ id: string; password_hash: string | null } | undefined>('id', 'password_hash');
  const valid = await verifyPassword(input.password, user?.password_hash ?? null);
  await db('sign_in_attempts').insert({ email, ip: input.ip, succeeded: valid && user !== undefined, at: now });
  if (!valid || !user) return { ok: false, reason: 'invalid' };
  return { ok: true, userId: user.id, session: await createSession(db, user.id, now) };
}
