import type { Knex } from 'knex';
import { userEmails } from '../dashboard-auth/user-emails.js';
import { assertReportablePeriod } from './billing-period.js';

export interface LedgerEntry {
  id: number;
  eventId: string;
  entryType: string;
  source: string;
  keyId: string | null;
  product: string | null;
  quantity: number;
  unit: string | null;
  creditsDelta: number;
  callsDelta: number;
  creditsBalanceAfter: number | null;
  period: string;
  occurredAt: string;
  appliedAt: string;
  actor: string | null;
  reason: string | null;
}

export const ledgerColumns = [
  'id', 'eventId', 'entryType', 'source', 'keyId', 'product', 'quantity', 'unit', 'creditsDelta', 'callsDelta',
  'creditsBalanceAfter', 'period', 'occurredAt', 'appliedAt', 'actor', 'reason',
] as const satisfies readonly (keyof LedgerEntry)[];

/** A `usage_ledger` row (`select *`) as the export and the dashboard's ledger page show it. */
export function ledgerEntryFromRow(r: Record<string, any>): LedgerEntry {
  return {
    id: r.id,
    eventId: r.event_id,
    entryType: r.entry_type,
    source: r.source,
    keyId: r.key_id,
    product: r.product,
    quantity: r.quantity,
    unit: r.unit,
    creditsDelta: r.credits_delta,
    callsDelta: r.calls_delta,
    creditsBalanceAfter: r.credits_balance_after,
    period: r.period,
    occurredAt: (r.occurred_at as Date).toISOString(),
    appliedAt: (r.applied_at as Date).toISOString(),
    actor: r.actor,
    reason: r.reason,
  };
}

export interface ExportLedgerOptions {
  /** Rows fetched from Postgres at a time: what the export holds in memory. */
  chunkSize?: number;
  /** What "a month that has not begun" is measured from (tests). */
  now?: Date;
  /** Only rows of this entry type (`usage`, `grant`, …), as the dashboard's ledger filter. */
  entryType?: string | null;
}

/**
 * Every ledger row of one organization and month (`period` null: every month, one after the
 * other, each as its own export gives it), in the order they happened, as they are read. A
 * busy organization's month is millions of rows (one per call), so the rows are not gathered
 * first: a cursor in a read-only transaction fetches them a chunk at a time, all from
 * the snapshot taken when it was declared (the billing worker keeps appending while the export
 * runs; the export is the month as it stood when it began). Stopping early (a `break`, a
 * failed write) ends the transaction.
 */
export function exportLedger(db: Knex, organizationId: string, period: string | null, options: ExportLedgerOptions = {}): AsyncGenerator<LedgerEntry> {
  // Checked here, not when the first row is asked for: a caller learns of a bad period
  // before it has written anything.
  if (period !== null) assertReportablePeriod(period, options.now ?? new Date());
  return readLedger(db, organizationId, period, options.entryType ?? null, options.chunkSize ?? 5_000);
}

async function* readLedger(db: Knex, organizationId: string, period: string | null, entryType: string | null, chunkSize: number): AsyncGenerator<LedgerEntry> {
  const selection = db('usage_ledger').where({ organization_id: organizationId });
  if (period !== null) selection.andWhere({ period });
  if (entryType !== null) selection.andWhere({ entry_type: entryType });
  // Month first, not time: a row's month need not be that of its time, and an all-months export
  // must be the monthly exports one after the other. The ledger index's order (migration 013):
  // nothing to sort.
  const query = selection
    .orderBy([{ column: 'period' }, { column: 'occurred_at' }, { column: 'id' }])
    .select('*')
    .toSQL();
  const trx = await db.transaction({ readOnly: true });
  try {
    await trx.raw(`DECLARE ledger_export NO SCROLL CURSOR FOR ${query.sql}`, query.bindings);
    for (;;) {
      const { rows } = await trx.raw<{ rows: Record<string, any>[] }>(`FETCH ${chunkSize} FROM ledger_export`);
      // A person who acted through the dashboard is named by e-mail, as the report and the
      // ledger page name them; others (`cli:maria`) as recorded. Usage rows have no actor.
      const emails = await userEmails(trx, rows.map((r) => r.actor as string | null));
      for (const row of rows) {
        const entry = ledgerEntryFromRow(row);
        yield entry.actor === null ? entry : { ...entry, actor: emails.get(entry.actor) ?? entry.actor };
      }
      if (rows.length < chunkSize) break;
    }
  } finally {
    // Read-only: nothing to keep. Rolling back also closes the cursor.
    await trx.rollback().catch(() => undefined);
  }
}
