import type { Knex } from 'knex';

// What a page shows once after a form redirected to it (a new API key, an invitation link),
// kept with the dashboard session between the POST and the GET that shows it, by the page's
// path. Sealed with the session's cookie value, which this table does not hold (only its
// hash): a copy of the table opens none of them.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions ADD COLUMN flashes jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE sessions DROP COLUMN flashes');
}
