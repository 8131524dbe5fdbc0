import { periodOf } from '../billing/billing-period.js';
import type { Db } from '../db/index.js';

export interface UsageSince {
  /** Credits spent on usage (positive) and calls counted against the cap, since `from`. */
  credits: number;
  calls: number;
  /** The first usage at or after `from`; null when there was none. */
  first: Date | null;
}

const DAY_MS = 86_400_000;

/**
 * An organization's usage since a moment, exactly as summing its ledger rows from then would
 * give it, but reading the ledger only for the first, partial UTC day: the whole days after it
 * come from the daily buckets (migration 015). A week of a busy organization is millions of
 * rows; this reads one day of them at most, through the ledger's index.
 */
export async function usageSince(db: Db, organizationId: string, from: Date): Promise<UsageSince> {
  const nextMidnight = new Date(Math.floor(from.getTime() / DAY_MS) * DAY_MS + DAY_MS);
  // A usage row's period is the month it occurred in: the period bound is exact and keeps the
  // index range to one month.
  const ledgerBetween = (start: Date, end: Date) =>
    db('usage_ledger')
      .where({ organization_id: organizationId, entry_type: 'usage', period: periodOf(start) })
      .andWhere('occurred_at', '>=', start)
      .andWhere('occurred_at', '<', end);
  const [partial, whole] = await Promise.all([
    ledgerBetween(from, nextMidnight).first<{ credits: number | null; calls: number | null; first: Date | null }>(
      db.raw('-SUM(credits_delta)::bigint AS credits'),
      db.raw('SUM(calls_delta)::bigint AS calls'),
      db.raw('MIN(occurred_at) AS first'),
    ),
    db('usage_daily')
      .where({ organization_id: organizationId })
      .andWhere('period', '>=', periodOf(nextMidnight))
      .andWhere('day', '>=', nextMidnight.toISOString().slice(0, 10))
      .first<{ credits: number | null; calls: number | null; day: string | null }>(
        db.raw('-SUM(credits_delta)::bigint AS credits'),
        db.raw('SUM(calls_delta)::bigint AS calls'),
        db.raw(`to_char(MIN(day), 'YYYY-MM-DD') AS day`),
      ),
  ]);
  let first = partial?.first ?? null;
  if (first === null && whole?.day) {
    // The first use is on the first day that has a bucket: its first ledger row of that day.
    const dayStart = new Date(`${whole.day}T00:00:00Z`);
    const row = await ledgerBetween(dayStart, new Date(dayStart.getTime() + DAY_MS)).first<{ first: Date | null }>(db.raw('MIN(occurred_at) AS first'));
    first = row?.first ?? null;
  }
  return { credits: (partial?.credits ?? 0) + (whole?.credits ?? 0), calls: (partial?.calls ?? 0) + (whole?.calls ?? 0), first: first === null ? null : new Date(first) };
}
