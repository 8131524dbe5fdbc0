import type { Knex } from 'knex';

// A change of the calls cap was a ledger row of type `adjustment` worth 0 credits, so finance saw
// it among the credit adjustments of a report and under the ledger's "Adjustment" filter. It is
// its own type now, `cap_change`. Rows written before are recognised by what only cap changes
// wrote: source `admin`, no credits or calls moved, and a reason `calls cap X -> Y…`.
const CAP_ROWS = "source = 'admin' AND credits_delta = 0 AND calls_delta = 0 AND reason LIKE 'calls cap % -> %'";

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_type_chk');
  await knex.raw("ALTER TABLE usage_ledger ADD CONSTRAINT usage_ledger_type_chk CHECK (entry_type IN ('usage','grant','top_up','adjustment','period_rollover','cap_change'))");
  await knex.raw(`UPDATE usage_ledger SET entry_type = 'cap_change' WHERE entry_type = 'adjustment' AND ${CAP_ROWS}`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("UPDATE usage_ledger SET entry_type = 'adjustment' WHERE entry_type = 'cap_change'");
  await knex.raw('ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_type_chk');
  await knex.raw("ALTER TABLE usage_ledger ADD CONSTRAINT usage_ledger_type_chk CHECK (entry_type IN ('usage','grant','top_up','adjustment','period_rollover'))");
}
