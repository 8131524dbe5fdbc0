import type { Knex } from 'knex';

// Browsers a person has signed in from (OWASP's "device cookies"): an attacker who keeps an
// e-mail locked with wrong passwords locks out only browsers that never signed in as it. The
// cookie holds a random secret; this table holds its SHA-256, so a leaked table trusts no
// browser. `password_digest` is the SHA-256 of the user's password hash when the browser was
// trusted: every way of setting a new password (the CLI's reset, an operator upsert, an accepted
// invitation) ends the trust of every browser of that person without having to know about it.
//
// A sign-in attempt made from a trusted browser names it (`device_id_hash`): those failures count
// against that browser's own budget, and not against the lock on its e-mail.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE TABLE trusted_devices (
    id_hash text PRIMARY KEY,
    user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
    password_digest text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
  )`);
  await knex.raw('CREATE INDEX trusted_devices_user_idx ON trusted_devices (user_id, created_at)');
  await knex.raw('ALTER TABLE sign_in_attempts ADD COLUMN device_id_hash text');
  await knex.raw('CREATE INDEX sign_in_attempts_device_idx ON sign_in_attempts (device_id_hash) WHERE device_id_hash IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sign_in_attempts DROP COLUMN device_id_hash');
  await knex.raw('DROP TABLE trusted_devices');
}
