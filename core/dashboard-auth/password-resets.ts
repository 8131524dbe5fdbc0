import type { Db } from '../db/index.js';
import { AppError, parseInput } from '../errors/index.js';
import { recordAudit } from './audit-log.js';
import { newPasswordSchema } from './change-password.js';
import { hashPassword } from './password-hash.js';
import { hashToken, newSecretToken } from './secret-token.js';
import { signInEmail } from './sign-in.js';

// A person who forgot their password gets a link that lets them set a new one. There is no
// e-mail: an admin of their organization (members page) or an operator (members page, or `cli
// operator reset-link`) makes the link and hands it over, as invitations are. Its secret is shown
// once; the table keeps its hash (migration 034).

/** Long enough to reach someone by whatever means the link goes (a chat, a call), no longer. */
export const PASSWORD_RESET_TTL_MS = 24 * 60 * 60 * 1000;

/** Who makes a link: an organization's admin, or one of our operators. */
export type ResetIssuer = 'admin' | 'operator';

/**
 * Why an admin cannot make a link for a member (invalid_params on `userId`; the dashboard words
 * them in the page's language). A link sets the person's one password, which opens every
 * organization they belong to: an admin of one may not take over an account that also opens
 * another organization, nor an operator's, whose password opens them all.
 */
export const RESET_REFUSED = {
  own: 'your own password is changed on the Change password page',
  elsewhere: 'also a member of another organization: only an operator can make their reset link',
  operator: 'an operator: only an operator can make their reset link',
} as const;

const refusal = (message: string) => new AppError('invalid_params', `userId: ${message}`, { details: [{ path: 'userId', message }] });

export interface CreatedPasswordReset {
  /** The secret for the link: shown once to whoever made it, never stored. */
  token: string;
  userId: string;
  email: string;
  expiresAt: Date;
}

/**
 * What an admin's link may not be for. Checked when the link is made and again when it is used:
 * a member who joined another organization since, or was removed from this one, or became an
 * operator, is no longer theirs to reset.
 */
async function adminMayReset(trx: Db, organizationId: string, user: { id: string; is_operator: boolean }): Promise<string | null> {
  if (user.is_operator) return RESET_REFUSED.operator;
  const organizations = await trx('memberships').where({ user_id: user.id }).pluck<string[]>('organization_id');
  if (!organizations.includes(organizationId)) return 'not a member';
  return organizations.length > 1 ? RESET_REFUSED.elsewhere : null;
}

/** Each organization the person belongs to: where a link made for them, and its use, are logged. */
const organizationsOf = (trx: Db, userId: string) => trx('memberships').where({ user_id: userId }).orderBy('organization_id').pluck<string[]>('organization_id');

/**
 * Makes a reset link for a person and logs it (`member.password_reset_issued`, actor: who made
 * it) in every organization they belong to. Their password stays as it is until the link is
 * used. The link made before for them, used or not, is deleted: only the newest one works.
 *
 * From a members page (`organizationId`), the person must be a member of that organization
 * (not_found otherwise, as the page's other actions); an admin may not make one for themselves
 * nor, see RESET_REFUSED, for an operator or someone who belongs to another organization too.
 * From the CLI (`organizationId` null), `email` names anyone with an account. Run it in a
 * transaction: the person's row is locked, so two links made at once leave one.
 */
export async function issuePasswordReset(
  trx: Db,
  input: ({ organizationId: string; userId: string } | { organizationId: null; email: string }) & { issuedBy: string; issuedAs: ResetIssuer; now?: Date },
): Promise<CreatedPasswordReset> {
  const now = input.now ?? new Date();
  const found = trx('users').whereNull('disabled_at').forUpdate();
  const user = await ('email' in input ? found.whereRaw('lower(email) = ?', [signInEmail(input.email)]) : found.where({ id: input.userId }))
    .first<{ id: string; email: string; is_operator: boolean; password_hash: string | null } | undefined>('id', 'email', 'is_operator', 'password_hash');
  if (!user) throw new AppError('not_found', 'email' in input ? `No user with e-mail "${input.email}".` : 'No such member.');
  if (input.organizationId !== null) {
    const member = await trx('memberships').where({ user_id: user.id, organization_id: input.organizationId }).first('user_id');
    if (!member) throw new AppError('not_found', 'No such member.');
    if (input.issuedAs === 'admin') {
      if (user.id === input.issuedBy) throw refusal(RESET_REFUSED.own);
      const refused = await adminMayReset(trx, input.organizationId, user);
      if (refused) throw refusal(refused);
    }
  }
  const token = newSecretToken();
  const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
  await trx('password_resets').where({ user_id: user.id }).delete();
  await trx('password_resets').insert({
    token_hash: hashToken(token),
    user_id: user.id,
    organization_id: input.organizationId,
    issued_by: input.issuedBy,
    issued_as: input.issuedAs,
    password_digest: user.password_hash === null ? null : hashToken(user.password_hash),
    created_at: now,
    expires_at: expiresAt,
  });
  for (const organizationId of await organizationsOf(trx, user.id)) {
    await recordAudit(trx, { organizationId, actor: input.issuedBy, action: 'member.password_reset_issued', details: { userId: user.id, email: user.email } });
  }
  return { token, userId: user.id, email: user.email, expiresAt };
}

interface ResetRow {
  user_id: string;
  organization_id: string | null;
  issued_as: ResetIssuer;
  password_digest: string | null;
  expires_at: Date;
  used_at: Date | null;
  email: string;
  is_operator: boolean;
  password_hash: string | null;
  disabled_at: Date | null;
}

const resetRow = (db: Db, token: string) =>
  db('password_resets as r').join('users as u', 'u.id', 'r.user_id').where('r.token_hash', hashToken(token))
    .first<ResetRow | undefined>('r.user_id', 'r.organization_id', 'r.issued_as', 'r.password_digest', 'r.expires_at', 'r.used_at', 'u.email', 'u.is_operator', 'u.password_hash', 'u.disabled_at');

/** What a link's page says: open (the form), used, expired, or not valid (unknown, replaced by a newer one, no longer applicable). */
export type PasswordResetState =
  | { state: 'open'; userId: string; email: string; expiresAt: Date }
  | { state: 'used' }
  | { state: 'expired'; expiredAt: Date }
  | { state: 'invalid' };

// Whether an unused, unexpired link still does what it was made for: the person not disabled,
// their password the one it was made under, and an admin's link still theirs to make.
async function stillApplies(db: Db, row: ResetRow): Promise<boolean> {
  if (row.disabled_at !== null) return false;
  if ((row.password_hash === null ? null : hashToken(row.password_hash)) !== row.password_digest) return false;
  if (row.issued_as === 'admin' && row.organization_id !== null) return (await adminMayReset(db, row.organization_id, { id: row.user_id, is_operator: row.is_operator })) === null;
  return true;
}

async function stateOf(db: Db, row: ResetRow | undefined, now: Date): Promise<PasswordResetState> {
  if (!row) return { state: 'invalid' };
  if (row.used_at !== null) return { state: 'used' };
  if (row.expires_at <= now) return { state: 'expired', expiredAt: row.expires_at };
  return (await stillApplies(db, row)) ? { state: 'open', userId: row.user_id, email: row.email, expiresAt: row.expires_at } : { state: 'invalid' };
}

export async function findPasswordReset(db: Db, token: string, now = new Date()): Promise<PasswordResetState> {
  return stateOf(db, await resetRow(db, token), now);
}

export type ResetPasswordResult =
  | { ok: true; userId: string; email: string }
  /** The passwords refused (every field at once, in `error.details`); the link still open, for `email`. */
  | { ok: false; reason: 'invalid_params'; error: AppError; email: string }
  /** The link does not open (any more): what its page says instead of the form. */
  | { ok: false; reason: 'closed'; state: Exclude<PasswordResetState, { state: 'open' }> };

/**
 * Sets the password a reset link was made for: the new one typed twice, refused as Change
 * password refuses it (every field at once). In one transaction, with the link's row locked so
 * that it works once (of two submits at once, the second finds it used): the new hash; every
 * session of the person ended and every browser trusted for them forgotten, since whoever held
 * the old password or a session opened with it (the reason for a reset, at times) must hold
 * nothing now; the link marked used; the lock that wrong passwords put on their e-mail lifted (a
 * person who forgot their password has usually tried a few, and must be able to sign in with the
 * new one now); and a `member.password_reset` row (actor: the person) in every organization they
 * belong to. Nothing of either password is logged.
 */
export async function resetPassword(
  db: Db,
  input: { token: string; newPassword: string; confirmPassword: string; ip: string | null; now?: Date },
): Promise<ResetPasswordResult> {
  const now = input.now ?? new Date();
  // The link first: no password is hashed for a link that opens nothing.
  const before = await stateOf(db, await resetRow(db, input.token), now);
  if (before.state !== 'open') return { ok: false, reason: 'closed', state: before };
  let fresh: { newPassword: string };
  try {
    fresh = parseInput(newPasswordSchema, { newPassword: input.newPassword, confirmPassword: input.confirmPassword });
  } catch (err) {
    if (err instanceof AppError) return { ok: false, reason: 'invalid_params', error: err, email: before.email };
    throw err;
  }
  const passwordHash = await hashPassword(fresh.newPassword);
  const tokenHash = hashToken(input.token);
  return db.transaction(async (trx): Promise<ResetPasswordResult> => {
    // The person's row, then the link's: the order issuePasswordReset takes them in (a new link
    // made at this moment deletes this one). Read again under those locks: used, replaced or
    // overtaken by a password change meanwhile, it opens nothing.
    await trx('users').where({ id: before.userId }).forUpdate().first('id');
    await trx('password_resets').where({ token_hash: tokenHash }).forUpdate().first('token_hash');
    const row = await resetRow(trx, input.token);
    const state = await stateOf(trx, row, now);
    if (state.state !== 'open') return { ok: false, reason: 'closed', state };
    const { userId } = state;
    await trx('users').where({ id: userId }).update({ password_hash: passwordHash });
    await trx('sessions').where({ user_id: userId }).whereNull('revoked_at').update({ revoked_at: now });
    await trx('trusted_devices').where({ user_id: userId }).delete();
    await trx('password_resets').where({ token_hash: tokenHash }).update({ used_at: now });
    // A success, as the sign-in lock reads them: failures before it no longer count.
    await trx('sign_in_attempts').insert({ email: signInEmail(state.email), ip: input.ip, succeeded: true, at: now });
    for (const organizationId of await organizationsOf(trx, userId)) {
      await recordAudit(trx, { organizationId, actor: userId, action: 'member.password_reset', details: { email: state.email } });
    }
    return { ok: true, userId, email: state.email };
  });
}
