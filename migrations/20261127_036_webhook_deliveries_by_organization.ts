import type { Knex } from 'knex';

// The dashboard's alerts page reads an organization's webhook delivery log, newest first, a page
// at a time, and counts it for the pager (core/alerts/deliver-webhooks.ts, deliveriesPage). The
// table had only the delivery runner's index of pending rows (migration 003): every read of the
// log scanned every organization's deliveries and sorted this one's, slower as the table grows,
// which it only does (nothing prunes it). This index gives both the rows in the page's order
// (read backward) and the count. Built CONCURRENTLY, outside a transaction, as migration 028's:
// the alert runner keeps inserting and updating deliveries, and a plain build would hold them
// until it is done. The previous release reads the table as before: safe in a rolling upgrade.
export const config = { transaction: false };

const NAME = 'webhook_deliveries_organization_created_idx';

export async function up(knex: Knex): Promise<void> {
  // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  await knex.raw(`CREATE INDEX CONCURRENTLY ${NAME} ON webhook_deliveries (organization_id, created_at, id)`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
}
