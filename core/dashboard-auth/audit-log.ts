import type { Db } from '../db/index.js';

export interface AuditEntry {
  organizationId: string | null;
  /** A user id (`usr_…`) or `system`. */
  actor: string;
  /** `key.created`, `organization.plan_set`, … */
  action: string;
  details?: Record<string, unknown>;
}

export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db('audit_log').insert({
    organization_id: entry.organizationId,
    actor: entry.actor,
    action: entry.action,
    details: entry.details ? JSON.stringify(entry.details) : null,
  });
}

/**
 * Makes a change and writes its audit row in one transaction: a change is never saved without
 * its row, and no row names a change that was rolled back. `change` must do all its writes
 * through the transaction it is given.
 */
export function withAudit<T>(db: Db, change: (trx: Db) => Promise<T>, entryFor: (result: T) => AuditEntry): Promise<T> {
  return db.transaction(async (trx) => {
    const result = await change(trx);
    await recordAudit(trx, entryFor(result));
    return result;
  });
}

export interface AuditRow {
  at: Date;
  actor: string;
  actorEmail: string | null;
  action: string;
  details: Record<string, unknown> | null;
}

export async function recentAudit(db: Db, organizationId: string, limit = 20): Promise<AuditRow[]> {
  const rows = await db('audit_log as a')
    .leftJoin('users as u', 'u.id', 'a.actor')
    .where('a.organization_id', organizationId)
    .orderBy('a.id', 'desc')
    .limit(limit)
    .select<{ at: Date; actor: string; email: string | null; action: string; details: Record<string, unknown> | null }[]>('a.at', 'a.actor', 'u.email', 'a.action', 'a.details');
  return rows.map((r) => ({ at: r.at, actor: r.actor, actorEmail: r.email, action: r.action, details: r.details }));
}
