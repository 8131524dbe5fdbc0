import type { Knex } from 'knex';

// The dashboard's ledger page lists an organization's rows newest first, 50 at a time, by
// month or across months, optionally one entry type. A busy organization has a ledger row per
// call, millions a month: without an index in that order each page sorted all of them (340 ms
// at 1.1 million rows, growing with every call). The old (organization, period, occurred_at)
// index becomes (…, id), the page's exact order, and the rare rows that are not usage (grants,
// top-ups, adjustments, rollovers) get a partial index of their own, so filtering to one of
// those types does not walk past every call. Built CONCURRENTLY, outside a transaction: the
// billing worker keeps inserting ledger rows while a large table is indexed.
export const config = { transaction: false };

export async function up(knex: Knex): Promise<void> {
  // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS usage_ledger_org_period_time_idx');
  await knex.raw('CREATE INDEX CONCURRENTLY usage_ledger_org_period_time_idx ON usage_ledger (organization_id, period, occurred_at, id)');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS usage_ledger_org_non_usage_idx');
  await knex.raw("CREATE INDEX CONCURRENTLY usage_ledger_org_non_usage_idx ON usage_ledger (organization_id, period, occurred_at, id) WHERE entry_type <> 'usage'");
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS usage_ledger_org_period_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX CONCURRENTLY IF NOT EXISTS usage_ledger_org_period_idx ON usage_ledger (organization_id, period, occurred_at)');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS usage_ledger_org_non_usage_idx');
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS usage_ledger_org_period_time_idx');
}
