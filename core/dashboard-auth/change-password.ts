import { z } from 'zod';
import type { Db } from '../db/index.js';
import { AppError, parseInput } from '../errors/index.js';
import { recordAudit } from './audit-log.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from './password-hash.js';
import { hashToken } from './secret-token.js';
import { createSession, rotateSession, type CreatedSession } from './session-store.js';
import { checkPasswordAttempt, type PasswordAttempt, type PasswordRefusal } from './sign-in.js';
import { forgetOtherDevices, trustDevice, type TrustedDevice } from './trusted-devices.js';

/** The refusal of a confirmation that differs (the dashboard words it in the page's language). */
export const PASSWORD_MISMATCH = 'does not match the new password';

// What the form sends: every refused field named at once (the confirmation compared here, not
// only in the browser, which a script or an old page skips). A reset link's form sends the same.
export const newPasswordSchema = z
  .object({
    newPassword: z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`),
    confirmPassword: z.string(),
  })
  .refine((v) => v.newPassword === v.confirmPassword, { path: ['confirmPassword'], message: PASSWORD_MISMATCH });

export type ChangePasswordResult =
  | { ok: true; email: string; session: CreatedSession; device: TrustedDevice }
  | PasswordRefusal
  | { ok: false; reason: 'invalid_params'; error: AppError }
  /** Another change of this person's password committed between the check and this one. */
  | { ok: false; reason: 'changed_meanwhile' };

/**
 * A signed-in person sets a new password, proving the current one first. The current one is
 * checked as a sign-in's is (checkPasswordAttempt): counted against the e-mail's lock, or the
 * trusted browser's own budget, so an unattended session is not an unbounded guessing oracle.
 *
 * What the old password opened ends with it, in the transaction that changes it: every other
 * session of the person, and every browser trusted for it. Both are bound to the password's
 * hash, so a sign-in with the old password still in flight makes a session that is never read;
 * ending them here says so at once. The session making the change carries on under a new token
 * (a copy of its old cookie opens nothing), and its browser is trusted afresh.
 *
 * The new hash is written only over the one that was checked: of two changes at once (a
 * double-click, two tabs), the second finds it changed and makes nothing (`changed_meanwhile`).
 *
 * Each organization the person is a member of gets a `member.password_changed` row naming them,
 * in the same transaction: its admins see when one of their people's passwords changed (a
 * session in someone else's hands can lock the owner out this way). Nothing of either password
 * goes in it. An operator without memberships belongs to no organization: no row.
 */
export async function changePassword(
  db: Db,
  input: Omit<PasswordAttempt, 'password'> & {
    userId: string;
    currentPassword: string;
    newPassword: string;
    confirmPassword: string;
    /** The cookie value of the session making the change: it carries on under a new one. */
    sessionToken: string;
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
  return db.transaction(async (trx): Promise<ChangePasswordResult> => {
    const [changed] = await trx('users').where({ id: input.userId, password_hash: proven.passwordHash }).update({ password_hash: passwordHash }, ['email']) as { email: string }[];
    if (!changed) return { ok: false, reason: 'changed_meanwhile' };
    await trx('sessions').where({ user_id: input.userId }).whereNull('revoked_at').whereNot({ id_hash: hashToken(input.sessionToken) }).update({ revoked_at: now });
    // Signed out meanwhile (from another browser): the person has just proved the password.
    const session = (await rotateSession(trx, { token: input.sessionToken, passwordHash, now })) ?? (await createSession(trx, { userId: input.userId, passwordHash, now }));
    const device = await trustDevice(trx, { userId: input.userId, passwordHash, replacing: proven.device, now });
    await forgetOtherDevices(trx, input.userId, device.token);
    const organizations = await trx('memberships').where({ user_id: input.userId }).pluck<string[]>('organization_id');
    for (const organizationId of organizations) {
      await recordAudit(trx, { organizationId, actor: input.userId, action: 'member.password_changed', details: { email: changed.email } });
    }
    return { ok: true, email: proven.email, session, device };
  });
}
