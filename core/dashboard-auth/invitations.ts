import { z } from 'zod';
import type { Db } from '../db/index.js';
import { AppError, isAppError, parseInput } from '../errors/index.js';
import { newId } from '../ids/index.js';
import { recordAudit } from './audit-log.js';
import { PASSWORD_MISMATCH } from './change-password.js';
import { addMembership, memberRoles, type MemberRole } from './memberships.js';
import { closeInvitations, lockUnacceptedInvitations } from './open-invitations.js';
import { hashPassword, MIN_PASSWORD_LENGTH } from './password-hash.js';
import { hashToken, newSecretToken } from './secret-token.js';

/** A person's name as they give it when they accept: shown in member lists, so bounded. */
export const MAX_NAME_LENGTH = 200;

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The refusal of an address that is not one (the dashboard words it in the page's language). */
export const NOT_AN_EMAIL = 'an e-mail address like name@company.it';

export const invitationInputSchema = z.object({
  organizationId: z.string().min(1),
  // RFC 5321's longest address: a longer one could not receive the invitation anyway.
  email: z.string().trim().toLowerCase().pipe(z.email({ error: NOT_AN_EMAIL }).max(254)),
  role: z.enum(memberRoles as [MemberRole, ...MemberRole[]]),
  invitedBy: z.string().min(1),
});
export type InvitationInput = z.input<typeof invitationInputSchema>;

/**
 * createInvitation's refusals of an address that already holds a role an invitation would not
 * change (accepting never lowers one); the dashboard says them again in its reader's language.
 */
export const ALREADY_MEMBER = {
  admin: 'already a member as admin',
  finance: 'already a member as finance',
  lower: 'already a member as admin: an invitation cannot lower a role',
} as const;

export interface CreatedInvitation {
  /** The secret for the link: shown once to whoever invites, never stored. */
  token: string;
  email: string;
  role: MemberRole;
  expiresAt: Date;
}

export async function createInvitation(db: Db, input: InvitationInput, now = new Date()): Promise<CreatedInvitation> {
  const parsed = parseInput(invitationInputSchema, input);
  const org = await db('organizations').where({ id: parsed.organizationId }).first('id');
  if (!org) throw new AppError('not_found', 'No such organization.');
  // A member's link would change nothing; only a promotion (finance to admin) is worth sending.
  // Someone with a membership but no password yet still needs a link to set one.
  const member = await db('memberships as m').join('users as u', 'u.id', 'm.user_id')
    .where('m.organization_id', parsed.organizationId).whereRaw('lower(u.email) = ?', [parsed.email]).whereNotNull('u.password_hash')
    .first<{ role: MemberRole } | undefined>('m.role');
  if (member && !(member.role === 'finance' && parsed.role === 'admin')) {
    const message = member.role === 'admin' && parsed.role === 'finance' ? ALREADY_MEMBER.lower : ALREADY_MEMBER[member.role];
    throw new AppError('invalid_params', `email: ${message}`, { details: [{ path: 'email', message }] });
  }
  const token = newSecretToken();
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS);
  await db('invitations').insert({
    token_hash: hashToken(token),
    organization_id: parsed.organizationId,
    email: parsed.email,
    role: parsed.role,
    invited_by: parsed.invitedBy,
    created_at: now,
    expires_at: expiresAt,
  });
  return { token, email: parsed.email, role: parsed.role, expiresAt };
}

export interface PendingInvitation {
  organizationId: string;
  organizationName: string;
  email: string;
  role: MemberRole;
  expiresAt: Date;
  /** The invited person already has a password (a member elsewhere): no new one is set. */
  existingUser: boolean;
}

export async function findInvitation(db: Db, token: string, now = new Date()): Promise<PendingInvitation | undefined> {
  const row = await db('invitations as i')
    .join('organizations as o', 'o.id', 'i.organization_id')
    .where('i.token_hash', hashToken(token))
    .whereNull('i.accepted_at')
    .andWhere('i.expires_at', '>', now)
    .first<{ organization_id: string; name: string; email: string; role: MemberRole; expires_at: Date } | undefined>('i.organization_id', 'o.name', 'i.email', 'i.role', 'i.expires_at');
  if (!row) return undefined;
  const user = await db('users').whereRaw('lower(email) = ?', [row.email.toLowerCase()]).first<{ password_hash: string | null } | undefined>('password_hash');
  return { organizationId: row.organization_id, organizationName: row.name, email: row.email, role: row.role, expiresAt: row.expires_at, existingUser: Boolean(user?.password_hash) };
}

/**
 * An invitation not accepted whose time ran out: its organization and when it expired, for a link
 * opened too late to say so, and when, rather than list every reason a link may fail. (A
 * cancelled invitation is deleted: nothing is left to say of it.)
 */
export async function expiredInvitation(db: Db, token: string, now = new Date()): Promise<{ organizationName: string; expiresAt: Date } | undefined> {
  const row = await db('invitations as i')
    .join('organizations as o', 'o.id', 'i.organization_id')
    .where('i.token_hash', hashToken(token))
    .whereNull('i.accepted_at')
    .andWhere('i.expires_at', '<=', now)
    .first<{ name: string; expires_at: Date } | undefined>('o.name', 'i.expires_at');
  return row ? { organizationName: row.name, expiresAt: row.expires_at } : undefined;
}

// How long after its acceptance a link still says so: long enough for a double-click, a reload
// or Back to the form (the second answer comes after the first joined), short enough that an
// old link, whose member may have left since, says only that it is no longer valid.
const JUST_ACCEPTED_MS = 10 * 60_000;

/** The organization of an invitation accepted within the last minutes; undefined otherwise. */
export async function justAcceptedInvitation(db: Db, token: string, now = new Date()): Promise<{ organizationId: string; organizationName: string } | undefined> {
  const row = await db('invitations as i')
    .join('organizations as o', 'o.id', 'i.organization_id')
    .where('i.token_hash', hashToken(token))
    .andWhere('i.accepted_at', '>', new Date(now.getTime() - JUST_ACCEPTED_MS))
    .first<{ organization_id: string; name: string } | undefined>('i.organization_id', 'o.name');
  return row ? { organizationId: row.organization_id, organizationName: row.name } : undefined;
}

/**
 * An invitation is named by its token's hash in the admins' cancel forms. The hash is not the
 * link's secret (that is never stored), so showing it to an admin opens nothing.
 */
export const invitationIdSchema = z.string().regex(/^[0-9a-f]{64}$/);

export interface PendingInvitationSummary {
  id: string;
  email: string;
  role: MemberRole;
  createdAt: Date;
  expiresAt: Date;
}

/** The invitations whose link still works: not accepted, not expired, not closed. */
export async function pendingInvitations(db: Db, organizationId: string, now = new Date()): Promise<PendingInvitationSummary[]> {
  const rows = await db('invitations').where({ organization_id: organizationId }).whereNull('accepted_at').andWhere('expires_at', '>', now).orderBy('created_at', 'desc')
    .select<{ token_hash: string; email: string; role: MemberRole; created_at: Date; expires_at: Date }[]>('token_hash', 'email', 'role', 'created_at', 'expires_at');
  return rows.map((r) => ({ id: r.token_hash, email: r.email, role: r.role, createdAt: r.created_at, expiresAt: r.expires_at }));
}

/** Cancels an invitation whose link still works; anything else (used, expired, another organization's) is not_found. */
export async function cancelInvitation(db: Db, input: { organizationId: string; invitationId: string }, now = new Date()): Promise<{ email: string; role: MemberRole }> {
  const id = invitationIdSchema.safeParse(input.invitationId);
  if (!id.success) throw new AppError('not_found', 'No such invitation.');
  const [row] = await db('invitations')
    .where({ token_hash: id.data, organization_id: input.organizationId })
    .whereNull('accepted_at')
    .andWhere('expires_at', '>', now)
    .delete()
    .returning<{ email: string; role: MemberRole }[]>(['email', 'role']);
  if (!row) throw new AppError('not_found', 'No such invitation.');
  return { email: row.email, role: row.role };
}

/**
 * What a newcomer types on the invitation page: every refused field is named at once. The
 * password twice, compared as Change password compares it (here, not only in the browser).
 */
const newcomerSchema = z
  .object({
    name: z.string().max(MAX_NAME_LENGTH, `at most ${MAX_NAME_LENGTH} characters`).nullable(),
    password: z.string().min(MIN_PASSWORD_LENGTH, `at least ${MIN_PASSWORD_LENGTH} characters`),
    confirmPassword: z.string(),
  })
  .refine((v) => v.password === v.confirmPassword, { path: ['confirmPassword'], message: PASSWORD_MISMATCH });

export type AcceptInvitationResult =
  | { ok: true; userId: string; organizationId: string }
  | { ok: false; reason: 'invalid_or_expired' | 'sign_in_required' }
  /** A password too short, a name too long: every refused field at once, in `error.details`. */
  | { ok: false; reason: 'invalid_params'; error: AppError };

/**
 * Accepting creates the person (or finds them by e-mail) and the membership, once: the
 * invitation row is locked and marked accepted in the same transaction (with the audit row,
 * `member.joined`), so a link works exactly one time. The address's other invitations to the
 * organization are closed with it: once removed, the person cannot come back with one of them.
 * A new person sets their password here (typed twice); someone who already has one must be signed in as the invited address (`signedInUserId`), so
 * a forwarded link cannot take over an account.
 */
export async function acceptInvitation(
  db: Db,
  input: { token: string; password?: string; confirmPassword?: string; name?: string; signedInUserId?: string | null; now?: Date },
): Promise<AcceptInvitationResult> {
  const now = input.now ?? new Date();
  const tokenHash = hashToken(input.token);
  return db.transaction(async (trx): Promise<AcceptInvitationResult> => {
    // Read which address and organization without a lock, then lock all of that address's
    // invitations in the order removeMember locks them (open-invitations.ts).
    const target = await trx('invitations').where({ token_hash: tokenHash }).whereNull('accepted_at')
      .first<{ organization_id: string; email: string } | undefined>('organization_id', 'email');
    if (!target) return { ok: false, reason: 'invalid_or_expired' };
    const unaccepted = await lockUnacceptedInvitations(trx, target.organization_id, target.email);
    const invitation = unaccepted.find((i) => i.tokenHash === tokenHash && i.expiresAt > now);
    if (!invitation) return { ok: false, reason: 'invalid_or_expired' };
    const organizationId = target.organization_id;
    const existing = await trx('users').whereRaw('lower(email) = ?', [invitation.email.toLowerCase()]).forUpdate().first<{ id: string; password_hash: string | null } | undefined>('id', 'password_hash');
    let userId: string;
    if (existing?.password_hash) {
      if (input.signedInUserId !== existing.id) return { ok: false, reason: 'sign_in_required' };
      userId = existing.id;
    } else {
      let newcomer: z.output<typeof newcomerSchema>;
      try {
        newcomer = parseInput(newcomerSchema, { name: input.name?.trim() || null, password: input.password ?? '', confirmPassword: input.confirmPassword ?? '' });
      } catch (err) {
        if (isAppError(err)) return { ok: false, reason: 'invalid_params', error: err };
        throw err;
      }
      const { name } = newcomer;
      const passwordHash = await hashPassword(newcomer.password);
      if (existing) {
        await trx('users').where({ id: existing.id }).update({ password_hash: passwordHash, name });
        userId = existing.id;
      } else {
        userId = newId('usr');
        await trx('users').insert({ id: userId, email: invitation.email, name, password_hash: passwordHash });
      }
    }
    await trx('invitations').where({ token_hash: tokenHash }).update({ accepted_at: now });
    await closeInvitations(trx, unaccepted.filter((i) => i.tokenHash !== tokenHash).map((i) => i.tokenHash));
    const role = await addMembership(trx, { userId, organizationId, role: invitation.role });
    // The role they hold, which is not the invitation's when an admin accepts a finance one
    // (addMembership never lowers a role): the log says what happened, not what was asked.
    const details = role === invitation.role ? { email: invitation.email, role } : { email: invitation.email, role, invitedAs: invitation.role };
    await recordAudit(trx, { organizationId, actor: userId, action: 'member.joined', details });
    return { ok: true, userId, organizationId };
  });
}
