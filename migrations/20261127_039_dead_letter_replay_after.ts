import type { Knex } from 'knex';

// An event dated ahead of the billing worker's clock (a producer whose clock runs fast) is a dead
// letter only until its time comes: `replay_after` is when it becomes chargeable, and the worker
// replays such rows by itself once it has passed (core/billing/replay-due-dead-letters.ts), where
// an operator had to. Null for every other dead letter (fixed by a person, then replayed by hand),
// and for those written by a release before this one, which does not fill it: the column is
// nullable, so that release keeps working on this schema during a rolling upgrade.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE usage_dead_letters ADD COLUMN replay_after timestamptz');
  await knex.raw('CREATE INDEX usage_dead_letters_due_idx ON usage_dead_letters (replay_after) WHERE resolved_at IS NULL AND replay_after IS NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX usage_dead_letters_due_idx');
  await knex.raw('ALTER TABLE usage_dead_letters DROP COLUMN replay_after');
}
