import type { Knex } from 'knex';

// The dashboard's ledger page and the ledger export list a month's rows in the order they were
// applied (the row's id), so that "balance after" chains from one row to the next: a usage
// event applied late (a backlog, a worker catching up) carries the balance of when it was
// applied, and listed by when its call happened it sat among rows whose balances it never saw.
// Migration 013's (organization, period, occurred_at, id) index has the old order; it stays,
// as the burn rate and the report's "as of" read a month's calls by time through it. This one
// gives pages and exports their new order without sorting a month of calls (millions of rows).
// Built CONCURRENTLY, outside a transaction: the billing worker keeps inserting ledger rows
// while a large table is indexed.
export const config = { transaction: false };

const NAME = 'usage_ledger_org_period_id_idx';

export async function up(knex: Knex): Promise<void> {
  // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  await knex.raw(`CREATE INDEX CONCURRENTLY ${NAME} ON usage_ledger (organization_id, period, id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
}
