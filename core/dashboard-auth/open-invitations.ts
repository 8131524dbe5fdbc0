import type { Db } from '../db/index.js';
import type { MemberRole } from './memberships.js';

export interface UnacceptedInvitation {
  tokenHash: string;
  email: string;
  role: MemberRole;
  expiresAt: Date;
}

/**
 * Locks every invitation of one address to one organization that has not been accepted, in
 * token-hash order. Accepting an invitation and removing a member both start here, and so take
 * these locks in the same order before touching the membership: the two cannot deadlock, and
 * a removal that commits first leaves the acceptance nothing to accept.
 */
export async function lockUnacceptedInvitations(trx: Db, organizationId: string, email: string): Promise<UnacceptedInvitation[]> {
  const rows = await trx('invitations')
    .where({ organization_id: organizationId })
    .whereRaw('lower(email) = ?', [email.toLowerCase()])
    .whereNull('accepted_at')
    .orderBy('token_hash')
    .forUpdate()
    .select<{ token_hash: string; email: string; role: MemberRole; expires_at: Date }[]>('token_hash', 'email', 'role', 'expires_at');
  return rows.map((r) => ({ tokenHash: r.token_hash, email: r.email, role: r.role, expiresAt: r.expires_at }));
}

/**
 * Closing an invitation deletes it: an unaccepted invitation is a live credential and nothing
 * else; who invited whom, and who cancelled it, stays in the audit log.
 */
export async function closeInvitations(trx: Db, tokenHashes: readonly string[]): Promise<void> {
  if (tokenHashes.length > 0) await trx('invitations').whereIn('token_hash', tokenHashes).whereNull('accepted_at').delete();
}
