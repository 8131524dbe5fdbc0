import { z } from 'zod';
import type { Db } from '../db/index.js';
import { AppError, parseInput } from '../errors/index.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from './password-hash.js';
import { hashToken } from './secret-token.js';
import { checkPasswordAttempt, type PasswordAttempt, type PasswordRefusal } from './sign-in.js';
import { forgetOtherDevices, trustDevice, type TrustedDevice } from './trusted-devices.js';

/** The refusal of a confirmation that differs (the dashboard words it in the page's language). */
export const PASSWORD_MISMATCH = 'does not match the new password';

// What the form sends: every refused field named at once (the confirmation compared here, not
// only in the browser, which a script or an old page skips).
const newPasswordSchema = z
  .object({
    newPassword: z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`),
    confirmPassword: z.string(),
  })
  .refine((v) => v.newPassword === v.confirmPassword, { path: ['confirmPassword'], message: PASSWORD_MISMATCH });

export type ChangePasswordResult =
  | { ok: true; email: string; device: TrustedDevice; sessionsEnded: number }
  | PasswordRefusal
  | { ok: false; reason: 'invalid_params'; error: AppError };

/**
 * A signed-in person sets a new password, proving the current one first. The current one is
 * checked as a sign-in's is (checkPasswordAttempt): counted against the e-mail's lock, or the
 * trusted browser's own budget, so an unattended session is not an unbounded guessing oracle.
 *
 * What the old password opened ends with it, in the transaction that changes it: every other
 * session of the person, and every browser trusted for it (trust is bound to the password's
 * hash, so they would be refused anyway: deleting them says so at once). The session that
 * made the change stays, and its browser is trusted afresh under the new password.
 */
export async function changePassword(
  db: Db,
  input: Omit<PasswordAttempt, 'password'> & {
    userId: string;
    currentPassword: string;
    newPassword: string;
    confirmPassword: string;
    /** The cookie value of the session making the change: it stays signed in. */
    keepSessionToken: string;
  },
): Promise<ChangePasswordResult> {
  const now = input.now ?? new Date();
  let fresh: { newPassword: string };
  try {
    fresh = parseInput(newPasswordSchema, { newPassword: input.newPassword, confirmPassword: input.confirmPassword });
  } catch (err) {
    if (err instanceof AppError) return { ok: false, reason: 'invalid_params', error: err };
    throw err;
  }
  const proven = await checkPasswordAttempt(db, { ...input, password: input.currentPassword, now });
  if (!proven.ok) return proven;
  // The session's person, not only someone whose password this is (an e-mail moved since).
  if (proven.userId !== input.userId) return { ok: false, reason: 'invalid' };

  const passwordHash = await hashPassword(fresh.newPassword);
  return db.transaction(async (trx) => {
    await trx('users').where({ id: input.userId }).update({ password_hash: passwordHash });
    const sessionsEnded = await trx('sessions')
      .where({ user_id: input.userId })
      .whereNull('revoked_at')
      .whereNot({ id_hash: hashToken(input.keepSessionToken) })
      .update({ revoked_at: now });
    const device = await trustDevice(trx, { userId: input.userId, passwordHash, replacing: proven.device, now });
    await forgetOtherDevices(trx, input.userId, device.token);
    return { ok: true, email: proven.email, device, sessionsEnded };
  });
}
