import type { Knex } from 'knex';

// The dashboard deletes the sign-in rows nothing reads any more, every hour
// (core/dashboard-auth/prune-sign-in-rows.ts): untrusted attempts past the lock's window, sessions
// ended an hour ago, expired trusted browsers. Without these indexes each of its batches would
// read the whole table. (Attempts from trusted browsers are found through
// sign_in_attempts_device_idx, migration 027.) Built CONCURRENTLY, outside a transaction:
// sign_in_attempts may be large already (it was never pruned), and building a plain index
// would hold every sign-in until it is done.
export const config = { transaction: false };

const indexes: [name: string, definition: string][] = [
  ['sign_in_attempts_untrusted_at_idx', 'ON sign_in_attempts (at) WHERE device_id_hash IS NULL'],
  ['sessions_expires_idx', 'ON sessions (expires_at)'],
  ['sessions_revoked_idx', 'ON sessions (revoked_at) WHERE revoked_at IS NOT NULL'],
  ['trusted_devices_expires_idx', 'ON trusted_devices (expires_at)'],
];

export async function up(knex: Knex): Promise<void> {
  for (const [name, definition] of indexes) {
    // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
    await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await knex.raw(`CREATE INDEX CONCURRENTLY ${name} ${definition}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of indexes) await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
}
