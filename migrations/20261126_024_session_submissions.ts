import type { Knex } from 'knex';

// The one-time submission tokens a dashboard session has already used (a JSON array, newest
// last, at most a few dozen): a form sent twice (a double-click) makes one key or invitation.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions ADD COLUMN submissions jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions DROP COLUMN submissions');
}
