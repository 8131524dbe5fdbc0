import type { Knex } from 'knex';
import { userEmails } from '../dashboard-auth/user-emails.js';
import { assertReportablePeriod } from './billing-period.js';
import { creditReference } from './credit-reference.js';

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
  /** The reference a grant, top-up or adjustment was made under (an invoice number), else null. */
  reference: string | null;
}

export const ledgerColumns = [
  'id', 'eventId', 'entryType', 'source', 'keyId', 'product', 'quantity', 'unit', 'creditsDelta', 'callsDelta',
  'creditsBalanceAfter', 'period', 'occurredAt', 'appliedAt', 'actor', 'reason', 'reference',
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
    reference: creditReference({ entryType: r.entry_type, organizationId: r.organization_id, eventId: r.event_id }),
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
 * One organization's ledger rows (of one month and one entry type, when given) in the order the
 * export and the dashboard's ledger page list them: by month, then in the order they were
 * applied (their id), not that of their calls. Each row's balance after is the balance when it
 * was applied, so only in this order does it chain from row to row: a usage event applied late
 * (a backlog) carries the balance after the top-up applied before it, however early its call.
 * Month first, so an all-months list is the monthly lists one after the other. Migration 032's
 * index holds this order, either way round: nothing to sort, however long the month.
 */
export function ledgerInOrder(db: Knex, organizationId: string, filters: { period: string | null; entryType: string | null }, order: 'asc' | 'desc'): Knex.QueryBuilder {
  const selection = db('usage_ledger').where({ organization_id: organizationId });
  // A month as a range of one, not `period = ?`: with the month fixed, the primary key gives id
  // order too, and the planner takes it when one organization is much of the table (it guesses
  // its rows evenly spread), then walks every later row of every organization to find an older
  // month's (0.4–1.1 s a page at 1.1 million rows, against 20 ms). A range leaves the month in
  // the order, which only the (organization, period, id) index gives.
  if (filters.period !== null) selection.andWhere('period', '>=', filters.period).andWhere('period', '<=', filters.period);
  if (filters.entryType !== null) selection.andWhere({ entry_type: filters.entryType });
  return selection.orderBy([{ column: 'period', order }, { column: 'id', order }]);
}

/**
 * Every ledger row of one organization and month (`period` null: every month, one after the
 * other, each as its own export gives it), oldest first in the order they were applied
 * (`ledgerInOrder`), as they are read. A busy organization's month is millions of rows (one per call), so the rows are not gathered
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
  const query = ledgerInOrder(db, organizationId, { period, entryType }, 'asc')
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
