import type { Knex } from 'knex';
import type { UsageEvent } from '../usage/index.js';

/** What a usage ledger row adds to its day (migration 015's usage_daily). */
export interface DailyUsageInput {
  event: UsageEvent;
  period: string;
  creditsDelta: number;
  callsDelta: number;
}

/**
 * The ledger's usage rows summed into the same buckets, as SQL: what usage_daily must hold
 * (`reconcileLedger` compares the two). Binds the organization ids to check, or null for all,
 * twice. The UTC day here and in `addDailyUsage` must stay the same.
 */
export const LEDGER_USAGE_BUCKETS_SQL = `
  SELECT organization_id, period, (occurred_at AT TIME ZONE 'UTC')::date AS day, source, product, key_id, unit,
         SUM(quantity)::bigint AS quantity, COUNT(*)::bigint AS calls, SUM(credits_delta)::bigint AS credits_delta, SUM(calls_delta)::bigint AS calls_delta
    FROM usage_ledger
   WHERE entry_type = 'usage' AND (?::text[] IS NULL OR organization_id = ANY(?::text[]))
   GROUP BY 1, 2, 3, 4, 5, 6, 7`;

/**
 * Adds a batch's new usage ledger rows to their days, in the same transaction, under the
 * organizations' allowance locks (so no two workers add to one organization's buckets at once,
 * and the buckets always equal the ledger: `reconcileLedger` checks it). One statement per batch:
 * the rows are summed per bucket here first.
 */
export async function addDailyUsage(trx: Knex.Transaction, rows: DailyUsageInput[]): Promise<void> {
  if (rows.length === 0) return;
  const buckets = new Map<string, { organizationId: string; period: string; day: string; source: string; product: string; keyId: string; unit: string; quantity: number; calls: number; creditsDelta: number; callsDelta: number }>();
  for (const { event, period, creditsDelta, callsDelta } of rows) {
    // The UTC day, as LEDGER_USAGE_BUCKETS_SQL (and migration 015's backfill) gives it.
    const day = new Date(event.occurredAt).toISOString().slice(0, 10);
    const key = [event.organizationId, period, day, event.source, event.product, event.keyId, event.unit].join('\u0000');
    const bucket = buckets.get(key);
    if (bucket) {
      bucket.quantity += event.quantity;
      bucket.calls += 1;
      bucket.creditsDelta += creditsDelta;
      bucket.callsDelta += callsDelta;
    } else {
      buckets.set(key, { organizationId: event.organizationId, period, day, source: event.source, product: event.product, keyId: event.keyId, unit: event.unit, quantity: event.quantity, calls: 1, creditsDelta, callsDelta });
    }
  }
  // In key order, so two statements touching the same buckets would take them in one order.
  const b = [...buckets.entries()].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)).map(([, v]) => v);
  await trx.raw(
    `INSERT INTO usage_daily AS d (organization_id, period, day, source, product, key_id, unit, quantity, calls, credits_delta, calls_delta)
     SELECT * FROM unnest(?::text[], ?::text[], ?::date[], ?::text[], ?::text[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[], ?::bigint[])
     ON CONFLICT (organization_id, period, day, source, product, key_id, unit) DO UPDATE
       SET quantity = d.quantity + EXCLUDED.quantity,
           calls = d.calls + EXCLUDED.calls,
           credits_delta = d.credits_delta + EXCLUDED.credits_delta,
           calls_delta = d.calls_delta + EXCLUDED.calls_delta`,
    [
      b.map((x) => x.organizationId),
      b.map((x) => x.period),
      b.map((x) => x.day),
      b.map((x) => x.source),
      b.map((x) => x.product),
      b.map((x) => x.keyId),
      b.map((x) => x.unit),
      b.map((x) => x.quantity),
      b.map((x) => x.calls),
      b.map((x) => x.creditsDelta),
      b.map((x) => x.callsDelta),
    ],
  );
}
