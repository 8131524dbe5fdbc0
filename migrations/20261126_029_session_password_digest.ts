import type { Knex } from 'knex';

// A session is bound to the password it was opened with, as a trusted browser is (migration
// 027): `password_digest` is the SHA-256 (hex) of the user's password hash at sign-in, and a
// session whose digest no longer matches is not read. So every way of setting a new password
// (the dashboard's change, the CLI's reset, an accepted invitation) ends every session opened
// with the old one, including one whose sign-in was still in flight while the password changed:
// ending the sessions that exist at that moment misses those.
//
// Live sessions get their user's current digest here. Null is a session written by a release
// before this one (a rolling upgrade): read as before, until it expires (12 h at most).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions ADD COLUMN password_digest text');
  await knex.raw(`UPDATE sessions s SET password_digest = encode(sha256(convert_to(u.password_hash, 'UTF8')), 'hex')
                    FROM users u
                   WHERE u.id = s.user_id AND u.password_hash IS NOT NULL AND s.revoked_at IS NULL AND s.expires_at > now()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions DROP COLUMN password_digest');
}
