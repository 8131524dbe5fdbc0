import type { Knex } from 'knex';

// The sign-in's per-address budget (core/dashboard-auth/sign-in.ts, maxAddressFailures) counts
// one client's failures from untrusted browsers inside the lock's window, on every attempt from
// a public address. A client is its block (core/net/public-address.ts, publicAddressBlock): an
// IPv4 address, or an IPv6 /64, which the text in `ip` cannot be matched on, hence a column.
// Without the index that count reads every untrusted attempt of the window, which a spray from
// many addresses makes many. Built CONCURRENTLY, outside a transaction, as migration 028's: a
// plain build would hold every sign-in until it is done. The previous release neither reads nor
// writes the column: safe in a rolling upgrade (its replicas' attempts go uncounted meanwhile).
export const config = { transaction: false };

const NAME = 'sign_in_attempts_untrusted_failures_by_block_idx';

export async function up(knex: Knex): Promise<void> {
  // Nullable, no default: a change of the catalogue only, however many rows the table holds.
  await knex.raw('ALTER TABLE sign_in_attempts ADD COLUMN IF NOT EXISTS address_block text');
  // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  await knex.raw(`CREATE INDEX CONCURRENTLY ${NAME} ON sign_in_attempts (address_block, at) WHERE device_id_hash IS NULL AND NOT succeeded`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  await knex.raw('ALTER TABLE sign_in_attempts DROP COLUMN IF EXISTS address_block');
}
