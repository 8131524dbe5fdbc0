import { z } from 'zod';
import type { Db } from '../db/index.js';
import { AppError, parseInput } from '../errors/index.js';
import { lastAdminRefusal, lockAdminsAndMember, memberRoles, type MemberRole } from './memberships.js';
import { closeInvitations, lockUnacceptedInvitations } from './open-invitations.js';

export const memberRoleChangeSchema = z.object({ role: z.enum(memberRoles as [MemberRole, ...MemberRole[]]) });

export interface MemberRoleChange {
  userId: string;
  email: string;
  from: MemberRole;
  /** Equal to `from` when the member already held the role: nothing was changed. */
  to: MemberRole;
}

/**
 * Gives a member of the organization another role, in place: their membership (and its "since"
 * date) is kept. The rules are removeMember's: someone who is not a member of this organization
 * is not_found; the organization keeps at least one admin, whoever asks (an admin demoting
 * themselves included), refused with the same invalid_params on `userId`, nothing changed. A
 * role that does not exist is invalid_params on `role`.
 *
 * Run it in a transaction (withAudit): it takes removeMember's locks in removeMember's order, so
 * a double submit, two admins demoting each other, or a demotion beside a removal end with one
 * admin at least, and the second of two identical changes finds the role already held (to ===
 * from, no row to write).
 *
 * A demotion closes the member's open admin invitations: accepting one (an older promotion
 * link) would make them admin again behind the demotion's back.
 */
export async function changeMemberRole(trx: Db, input: { organizationId: string; userId: string; role: string }): Promise<MemberRoleChange> {
  const { organizationId, userId } = input;
  const { role: to } = parseInput(memberRoleChangeSchema, { role: input.role });
  const user = await trx('users').where({ id: userId }).first<{ email: string } | undefined>('email');
  if (!user) throw new AppError('not_found', 'No such member.');
  const invitations = await lockUnacceptedInvitations(trx, organizationId, user.email);
  const { role: from, admins } = await lockAdminsAndMember(trx, organizationId, userId);
  if (!from) throw new AppError('not_found', 'No such member.');
  const change = { userId, email: user.email, from, to };
  if (from === to) return change;
  if (from === 'admin' && admins === 1) throw lastAdminRefusal('given another role');
  await trx('memberships').where({ organization_id: organizationId, user_id: userId }).update({ role: to });
  if (to !== 'admin') await closeInvitations(trx, invitations.filter((i) => i.role === 'admin').map((i) => i.tokenHash));
  return change;
}
