import type { Knex } from 'knex';

// Usage by organization, month, UTC day, source, product, key and unit, kept by the billing
// worker in the transaction that writes the ledger rows (core/billing/daily-usage.ts). The
// allowance report (dashboard report page, its CSV, `cli report`, the usage chart) grouped a
// month's usage rows four ways on every view: a ledger row per call made that grow through the
// month, and the opening balance summed every earlier month too. Now it reads at most a row per
// day, product and key.
//
// Backfilled here from the ledger. The ledger is locked against writes until this migration
// commits, so no usage row is applied between the backfill and the table: run it with the
// previous version's workers stopped (they would not keep the table; `cli reconcile` reports
// any day that disagrees with the ledger).
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE usage_daily (
      organization_id text NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
      period text NOT NULL,
      day date NOT NULL,
      source text NOT NULL,
      product text,
      key_id text,
      unit text,
      quantity bigint NOT NULL,
      calls bigint NOT NULL,
      credits_delta bigint NOT NULL,
      calls_delta bigint NOT NULL
    )`);
  // NULLS NOT DISTINCT (PostgreSQL 15+): a legacy usage row without a key or unit still has one
  // bucket to add to.
  await knex.raw('CREATE UNIQUE INDEX usage_daily_bucket_idx ON usage_daily (organization_id, period, day, source, product, key_id, unit) NULLS NOT DISTINCT');
  await knex.raw('LOCK TABLE usage_ledger IN SHARE MODE');
  await knex.raw(`
    INSERT INTO usage_daily (organization_id, period, day, source, product, key_id, unit, quantity, calls, credits_delta, calls_delta)
    SELECT organization_id, period, (occurred_at AT TIME ZONE 'UTC')::date, source, product, key_id, unit,
           SUM(quantity), COUNT(*), SUM(credits_delta), SUM(calls_delta)
      FROM usage_ledger
     WHERE entry_type = 'usage'
     GROUP BY 1, 2, 3, 4, 5, 6, 7`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE usage_daily');
}
