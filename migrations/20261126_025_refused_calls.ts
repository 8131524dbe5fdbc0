import type { Knex } from 'knex';

// A call refused (503) whose usage event may still reach the bus after its caller was refused (a
// stalled broker or database) gets a ledger row of its own type, `refused`, worth nothing, under
// the event's id: the ledger charges each id once, so the event, should it arrive, is not
// charged (core/billing/record-refused-calls.ts).
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_type_chk');
  await knex.raw("ALTER TABLE usage_ledger ADD CONSTRAINT usage_ledger_type_chk CHECK (entry_type IN ('usage','grant','top_up','adjustment','period_rollover','cap_change','refused'))");
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("DELETE FROM usage_ledger WHERE entry_type = 'refused'");
  await knex.raw('ALTER TABLE usage_ledger DROP CONSTRAINT usage_ledger_type_chk');
  await knex.raw("ALTER TABLE usage_ledger ADD CONSTRAINT usage_ledger_type_chk CHECK (entry_type IN ('usage','grant','top_up','adjustment','period_rollover','cap_change'))");
}
