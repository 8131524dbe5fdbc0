import type { Knex } from 'knex';

// A dead letter can be replayed once its cause is fixed (`cli billing dead-letters replay`):
// the row stays, as the record of what was set aside and when, and says who replayed it, when,
// and what the ledger made of it. Open dead letters are the ones with no resolved_at.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`ALTER TABLE usage_dead_letters
    ADD COLUMN resolved_at timestamptz,
    ADD COLUMN resolved_by text,
    ADD COLUMN resolution text`);
  await knex.raw('CREATE INDEX usage_dead_letters_open_idx ON usage_dead_letters (id) WHERE resolved_at IS NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX usage_dead_letters_open_idx');
  await knex.raw('ALTER TABLE usage_dead_letters DROP COLUMN resolution, DROP COLUMN resolved_by, DROP COLUMN resolved_at');
}
