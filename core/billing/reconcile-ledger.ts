import type { Knex } from 'knex';

export interface ReconcileDifference {
  organizationId: string;
  creditsBalance: number | null;
  ledgerCredits: number;
  callsUsed: number | null;
  ledgerCalls: number;
}

export interface ReconcileResult {
  organizations: number;
  ledgerRows: number;
  differences: ReconcileDifference[];
}

/**
 * Every organization's allowance must equal its ledger: credits_balance = Σ credits_delta and
 * calls_used = Σ calls_delta (rollover rows carry the reset of calls_used, so all-time sums
 * work). Run against a live system it may see a worker mid-commit only as before or after,
 * never between: each batch moves ledger and allowance in one transaction.
 */
export async function reconcileLedger(db: Knex, options: { organizationIds?: string[] } = {}): Promise<ReconcileResult> {
  const only = options.organizationIds ?? null;
  const { rows } = await db.raw<{ rows: { organization_id: string; credits_balance: number | null; calls_used: number | null; ledger_credits: number; ledger_calls: number; ledger_rows: number }[] }>(
    `WITH sums AS (
       SELECT organization_id, SUM(credits_delta)::bigint AS credits, SUM(calls_delta)::bigint AS calls, COUNT(*)::bigint AS n
         FROM usage_ledger WHERE (?::text[] IS NULL OR organization_id = ANY(?::text[])) GROUP BY organization_id
     )
     SELECT COALESCE(a.organization_id, s.organization_id) AS organization_id,
            a.credits_balance, a.calls_used,
            COALESCE(s.credits, 0) AS ledger_credits, COALESCE(s.calls, 0) AS ledger_calls, COALESCE(s.n, 0) AS ledger_rows
       FROM (SELECT * FROM allowances WHERE ?::text[] IS NULL OR organization_id = ANY(?::text[])) a
       FULL JOIN sums s ON s.organization_id = a.organization_id
      ORDER BY 1`,
    [only, only, only, only],
  );
  const differences = rows
    .filter((r) => r.credits_balance !== r.ledger_credits || r.calls_used !== r.ledger_calls)
    .map((r) => ({ organizationId: r.organization_id, creditsBalance: r.credits_balance, ledgerCredits: r.ledger_credits, callsUsed: r.calls_used, ledgerCalls: r.ledger_calls }));
  return { organizations: rows.length, ledgerRows: rows.reduce((n, r) => n + r.ledger_rows, 0), differences };
}
