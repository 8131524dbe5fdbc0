import type { Knex } from 'knex';
import { LEDGER_USAGE_BUCKETS_SQL } from './daily-usage.js';

export interface ReconcileDifference {
  organizationId: string;
  creditsBalance: number | null;
  ledgerCredits: number;
  callsUsed: number | null;
  ledgerCalls: number;
  creditsUsed: number | null;
  /** Credits of the ledger's usage rows in the allowance's period. */
  ledgerCreditsUsed: number;
  /** Daily usage buckets (usage_daily) that do not add up to their ledger rows. */
  dailyBucketsOff: number;
}

export interface ReconcileResult {
  organizations: number;
  ledgerRows: number;
  differences: ReconcileDifference[];
}

/**
 * Every organization's allowance must equal its ledger: credits_balance = Σ credits_delta and
 * calls_used = Σ calls_delta (rollover rows carry the reset of calls_used, so all-time sums
 * work), credits_used = the credits of its usage rows in the allowance's period, and each
 * daily usage bucket (usage_daily, what the allowance report reads) = the sums of its rows.
 * Run against a live system it may see a worker mid-commit only as before or after, never
 * between: each batch moves ledger, buckets and allowance in one transaction.
 */
export async function reconcileLedger(db: Knex, options: { organizationIds?: string[] } = {}): Promise<ReconcileResult> {
  const only = options.organizationIds ?? null;
  const { rows } = await db.raw<{ rows: { organization_id: string; credits_balance: number | null; calls_used: number | null; credits_used: number | null; ledger_credits: number; ledger_calls: number; ledger_used: number; ledger_rows: number; daily_off: number }[] }>(
    `WITH sums AS (
       SELECT l.organization_id, SUM(l.credits_delta)::bigint AS credits, SUM(l.calls_delta)::bigint AS calls, COUNT(*)::bigint AS n,
              (-SUM(l.credits_delta) FILTER (WHERE l.entry_type = 'usage' AND l.period = b.period))::bigint AS used
         FROM usage_ledger l LEFT JOIN allowances b ON b.organization_id = l.organization_id
        WHERE (?::text[] IS NULL OR l.organization_id = ANY(?::text[])) GROUP BY l.organization_id
     ),
     buckets AS (${LEDGER_USAGE_BUCKETS_SQL}),
     daily_off AS (
       SELECT COALESCE(g.organization_id, d.organization_id) AS organization_id, COUNT(*)::bigint AS n
         FROM buckets g
         FULL JOIN (SELECT * FROM usage_daily WHERE ?::text[] IS NULL OR organization_id = ANY(?::text[])) d
           ON d.organization_id = g.organization_id AND d.period = g.period AND d.day = g.day AND d.source = g.source
          AND COALESCE(d.product, '') = COALESCE(g.product, '') AND COALESCE(d.key_id, '') = COALESCE(g.key_id, '') AND COALESCE(d.unit, '') = COALESCE(g.unit, '')
        WHERE g.quantity IS DISTINCT FROM d.quantity OR g.calls IS DISTINCT FROM d.calls
           OR g.credits_delta IS DISTINCT FROM d.credits_delta OR g.calls_delta IS DISTINCT FROM d.calls_delta
        GROUP BY 1
     )
     SELECT COALESCE(a.organization_id, s.organization_id) AS organization_id,
            a.credits_balance, a.calls_used, a.credits_used,
            COALESCE(s.credits, 0) AS ledger_credits, COALESCE(s.calls, 0) AS ledger_calls, COALESCE(s.used, 0) AS ledger_used, COALESCE(s.n, 0) AS ledger_rows,
            COALESCE(o.n, 0) AS daily_off
       FROM (SELECT * FROM allowances WHERE ?::text[] IS NULL OR organization_id = ANY(?::text[])) a
       FULL JOIN sums s ON s.organization_id = a.organization_id
       LEFT JOIN daily_off o ON o.organization_id = COALESCE(a.organization_id, s.organization_id)
      ORDER BY 1`,
    [only, only, only, only, only, only, only, only],
  );
  const differences = rows
    .filter((r) => r.credits_balance !== r.ledger_credits || r.calls_used !== r.ledger_calls || (r.credits_used !== null && r.credits_used !== r.ledger_used) || r.daily_off > 0)
    .map((r) => ({
      organizationId: r.organization_id,
      creditsBalance: r.credits_balance,
      ledgerCredits: r.ledger_credits,
      callsUsed: r.calls_used,
      ledgerCalls: r.ledger_calls,
      creditsUsed: r.credits_used,
      ledgerCreditsUsed: r.ledger_used,
      dailyBucketsOff: r.daily_off,
    }));
  return { organizations: rows.length, ledgerRows: rows.reduce((n, r) => n + r.ledger_rows, 0), differences };
}
