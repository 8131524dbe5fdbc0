import type { Knex } from 'knex';
import type { Flags } from './allowance-flags.js';

export interface AllowanceRow extends Flags {
  organization_id: string;
  period: string;
  credits_balance: number;
  calls_used: number;
  /** Credits charged for usage that occurred in `period` (the ledger's usage rows of it). */
  credits_used: number;
  calls_cap: number | null;
  last_event_at: Date | null;
}

const COLUMNS = 'organization_id, period, credits_balance, calls_used, credits_used, calls_cap, credits_exhausted, limit_reached, last_event_at';

/**
 * Locks the allowance rows of these organizations, always in organization-id order: every
 * writer (worker replicas, CLI, rollover sweep) takes them in the same order, so two
 * transactions touching overlapping organizations wait for each other but never deadlock.
 * An organization that exists but has no allowance row yet gets one (period `period`);
 * organizations that do not exist are simply absent from the result.
 */
export async function lockAllowances(trx: Knex.Transaction, organizationIds: string[], period: string): Promise<Map<string, AllowanceRow>> {
  const ids = [...new Set(organizationIds)].sort();
  const locked = new Map<string, AllowanceRow>();
  if (ids.length === 0) return locked;
  const { rows } = await trx.raw<{ rows: AllowanceRow[] }>(
    `SELECT ${COLUMNS} FROM allowances WHERE organization_id = ANY(?::text[]) ORDER BY organization_id FOR UPDATE`,
    [ids],
  );
  for (const row of rows) locked.set(row.organization_id, row);
  const missing = ids.filter((id) => !locked.has(id));
  if (missing.length > 0) {
    // Rare (createOrganization makes the row): the rows we insert are ours until commit, so
    // taking them after the others cannot deadlock with a writer that follows the order.
    const inserted = await trx.raw<{ rows: AllowanceRow[] }>(
      `INSERT INTO allowances (organization_id, period)
       SELECT id, ? FROM organizations WHERE id = ANY(?::text[]) ORDER BY id
       ON CONFLICT (organization_id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [period, missing],
    );
    for (const row of inserted.rows) locked.set(row.organization_id, row);
    const stillMissing = missing.filter((id) => !locked.has(id));
    if (stillMissing.length > 0) {
      const raced = await trx.raw<{ rows: AllowanceRow[] }>(
        `SELECT ${COLUMNS} FROM allowances WHERE organization_id = ANY(?::text[]) ORDER BY organization_id FOR UPDATE`,
        [stillMissing],
      );
      for (const row of raced.rows) locked.set(row.organization_id, row);
    }
  }
  return locked;
}
