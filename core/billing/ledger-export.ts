import type { Knex } from 'knex';
import { AppError } from '../errors/index.js';
import { isPeriod } from './billing-period.js';

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

/** Every ledger row of one organization and month, in the order they happened. */
export async function exportLedger(db: Knex, organizationId: string, period: string): Promise<LedgerEntry[]> {
  if (!isPeriod(period)) throw new AppError('invalid_params', 'period must be YYYY-MM', { details: [{ path: 'period', message: 'YYYY-MM' }] });
  const rows = await db('usage_ledger')
    .where({ organization_id: organizationId, period })
    .orderBy([{ column: 'occurred_at' }, { column: 'id' }])
    .select<Record<string, any>[]>('*');
  return rows.map((r) => ({
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
  }));
}
