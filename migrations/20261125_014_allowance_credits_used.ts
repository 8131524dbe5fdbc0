import type { Knex } from 'knex';

// Credits used this period, kept on the allowance by the billing worker as it keeps calls_used,
// instead of summed from the ledger on every read. The alert runner summed the month's usage
// rows of every organization with a threshold every 5 s, in each dashboard process, and the
// overview did on every view: a busy organization has a ledger row per call, so that was
// Postgres work growing through the month (~0.2 s per million rows, per read). Backfilled from
// the ledger inside this migration's transaction, which holds the table's lock: no usage is
// applied between the sum and the column.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE allowances ADD COLUMN credits_used bigint NOT NULL DEFAULT 0');
  await knex.raw(`
    UPDATE allowances a
       SET credits_used = u.used
      FROM (SELECT l.organization_id, -SUM(l.credits_delta)::bigint AS used
              FROM usage_ledger l JOIN allowances b ON b.organization_id = l.organization_id AND b.period = l.period
             WHERE l.entry_type = 'usage'
             GROUP BY l.organization_id) u
     WHERE a.organization_id = u.organization_id`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE allowances DROP COLUMN credits_used');
}
