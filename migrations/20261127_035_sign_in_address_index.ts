import type { Knex } from 'knex';

// The sign-in's per-address budget (core/dashboard-auth/sign-in.ts, maxAddressFailures) counts
// one client address's failures from untrusted browsers inside the lock's window, on every
// attempt from a public address: without this index that count reads every untrusted attempt
// of the window, which a spray from many addresses makes many. Built CONCURRENTLY, outside a
// transaction, as migration 028's: a plain build would hold every sign-in until it is done.
// The previous release neither reads nor writes anything new: safe in a rolling upgrade.
export const config = { transaction: false };

const NAME = 'sign_in_attempts_untrusted_failures_by_ip_idx';

export async function up(knex: Knex): Promise<void> {
  // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  await knex.raw(`CREATE INDEX CONCURRENTLY ${NAME} ON sign_in_attempts (ip, at) WHERE device_id_hash IS NULL AND NOT succeeded`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
}
