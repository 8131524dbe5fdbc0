import type { Knex } from 'knex';

// Where a dead letter came from (`topic/partition@offset` on Kafka, `usage_bus_batches#seq/i` on
// the Postgres bus; `event <id>` for an event of an unknown organization until 26 Nov 2026, when
// those too began to name their message), and the same message
// from there, kept once. A Kafka worker that stops between a chunk's commit and its offset commit
// gets the chunk again: its dead letters were written again, and the operators' count of unbilled
// usage messages counted each twice. The payload's digest is part of the key because a source can
// name another message later (a topic deleted and made again starts its offsets at 0 again): that
// one must be kept, not taken for the first. Written with ON CONFLICT DO NOTHING. Rows from
// before have no source (NULLs never conflict).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE usage_dead_letters ADD COLUMN source text');
  await knex.raw('ALTER TABLE usage_dead_letters ADD COLUMN payload_md5 text GENERATED ALWAYS AS (md5(payload)) STORED');
  await knex.raw('CREATE UNIQUE INDEX usage_dead_letters_source_key ON usage_dead_letters (source, payload_md5)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX usage_dead_letters_source_key');
  await knex.raw('ALTER TABLE usage_dead_letters DROP COLUMN payload_md5');
  await knex.raw('ALTER TABLE usage_dead_letters DROP COLUMN source');
}
