import type { Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { closeInvitations, lockUnacceptedInvitations } from './open-invitations.js';
import type { SessionUser } from './session-store.js';

export type MemberRole = 'admin' | 'finance';
/** What a person is to one organization; operators are staff and see every organization. */
export type OrganizationRole = MemberRole | 'operator';

export const memberRoles: readonly MemberRole[] = ['admin', 'finance'];

/** What each role may do in an organization. Finance reads the money, admins also change
 * things and read who changed what (the activity page). */
export type Capability = 'view_finance' | 'manage_keys' | 'manage_members' | 'manage_alerts' | 'view_activity';

const capabilities: Record<OrganizationRole, readonly Capability[]> = {
  operator: ['view_finance', 'manage_keys', 'manage_members', 'manage_alerts', 'view_activity'],
  admin: ['view_finance', 'manage_keys', 'manage_members', 'manage_alerts', 'view_activity'],
  finance: ['view_finance'],
};

export function can(role: OrganizationRole, capability: Capability): boolean {
  return capabilities[role].includes(capability);
}

/** null when the person has nothing to do with the organization (or it does not exist). */
export async function roleIn(db: Db, user: SessionUser, organizationId: string): Promise<OrganizationRole | null> {
  if (user.isOperator) {
    const org = await db('organizations').where({ id: organizationId }).first('id');
    return org ? 'operator' : null;
  }
  const row = await db('memberships').where({ user_id: user.id, organization_id: organizationId }).first<{ role: MemberRole } | undefined>('role');
  return row?.role ?? null;
}

export interface MembershipSummary {
  organizationId: string;
  organizationName: string;
  role: MemberRole;
}

export async function membershipsOf(db: Db, userId: string): Promise<MembershipSummary[]> {
  const rows = await db('memberships as m')
    .join('organizations as o', 'o.id', 'm.organization_id')
    .where('m.user_id', userId)
    .orderBy('o.name')
    .select<{ organization_id: string; name: string; role: MemberRole }[]>('m.organization_id', 'o.name', 'm.role');
  return rows.map((r) => ({ organizationId: r.organization_id, organizationName: r.name, role: r.role }));
}

export interface Member {
  userId: string;
  email: string;
  name: string | null;
  role: MemberRole;
  since: Date;
  /** False until the invitation is accepted and a password set. */
  active: boolean;
}

export async function membersOf(db: Db, organizationId: string): Promise<Member[]> {
  const rows = await db('memberships as m')
    .join('users as u', 'u.id', 'm.user_id')
    .where('m.organization_id', organizationId)
    .orderBy('u.email')
    .select<{ user_id: string; email: string; name: string | null; role: MemberRole; created_at: Date; has_password: boolean }[]>(
      'm.user_id', 'u.email', 'u.name', 'm.role', 'm.created_at', db.raw('u.password_hash IS NOT NULL AS has_password'),
    );
  return rows.map((r) => ({ userId: r.user_id, email: r.email, name: r.name, role: r.role, since: r.created_at, active: r.has_password }));
}

/**
 * Makes the person a member with this role, or raises their role to it. It never lowers one: an
 * admin who accepts a finance invitation stays an admin (a demotion could leave the organization
 * with no admin, which removeMember refuses to do). Resolves to the role they hold afterwards.
 */
export async function addMembership(db: Db, input: { userId: string; organizationId: string; role: MemberRole }): Promise<MemberRole> {
  const [row] = (await db('memberships')
    .insert({ user_id: input.userId, organization_id: input.organizationId, role: input.role })
    .onConflict(['user_id', 'organization_id'])
    .merge({ role: db.raw("CASE WHEN memberships.role = 'admin' THEN memberships.role ELSE EXCLUDED.role END") })
    .returning('role')) as { role: MemberRole }[];
  return row!.role;
}

/**
 * Locks, in user-id order, the organization's admins and the one member a change is about: the
 * lock every change to who is an admin takes (removal, role change), so two of them at once
 * cannot both take away what they each counted as the other admin. `role` is undefined when
 * `userId` is not a member; `admins` counts the admins as they are once locked.
 */
export async function lockAdminsAndMember(trx: Db, organizationId: string, userId: string): Promise<{ role: MemberRole | undefined; admins: number }> {
  const locked = await trx('memberships')
    .where({ organization_id: organizationId })
    .andWhere((q) => q.where({ role: 'admin' }).orWhere({ user_id: userId }))
    .orderBy('user_id')
    .forUpdate()
    .select<{ user_id: string; role: MemberRole }[]>('user_id', 'role');
  return { role: locked.find((m) => m.user_id === userId)?.role, admins: locked.filter((m) => m.role === 'admin').length };
}

/** The refusal of a change that would leave the organization without an admin (invalid_params on `userId`). */
export function lastAdminRefusal(verb: 'removed' | 'given another role'): AppError {
  return new AppError('invalid_params', `userId: the last admin of the organization cannot be ${verb}`, { details: [{ path: 'userId', message: 'the last admin of the organization' }] });
}

/**
 * Removes a person from an organization, with the invitations of their address that were not
 * accepted: an older link must not let them back in. An organization keeps at least one admin,
 * whoever asks (the admin themselves, another admin, an operator): that removal is refused with
 * invalid_params, the only one this throws, and nothing changes. Run it in a transaction
 * (withAudit): the admins' rows are locked, so two admins removing each other at once cannot
 * both succeed.
 */
export async function removeMember(trx: Db, input: { organizationId: string; userId: string }): Promise<{ email: string; role: MemberRole }> {
  const { organizationId, userId } = input;
  const user = await trx('users').where({ id: userId }).first<{ email: string } | undefined>('email');
  if (!user) throw new AppError('not_found', 'No such member.');
  // Invitations before memberships: the order acceptInvitation takes its locks in.
  const invitations = await lockUnacceptedInvitations(trx, organizationId, user.email);
  const { role, admins } = await lockAdminsAndMember(trx, organizationId, userId);
  if (!role) throw new AppError('not_found', 'No such member.');
  if (role === 'admin' && admins === 1) throw lastAdminRefusal('removed');
  await closeInvitations(trx, invitations.map((i) => i.tokenHash));
  await trx('memberships').where({ organization_id: organizationId, user_id: userId }).delete();
  return { email: user.email, role };
}
