import type { Knex } from 'knex';

// Who changed a flag was written into its reason, as `<reason> (<actor>)`, so a report showed a
// dashboard user as `usr_…`, an id finance cannot read, where its credit rows show the person's
// e-mail. The actor has a column of its own now, resolved to an e-mail when read, as the
// ledger's is. Rows written before are split: only a person's change (adjust-allowance.ts)
// wrote a reason ending in a bracketed actor; the system's reasons never end in a bracket.
const ACTOR_SUFFIX = ' \\(([^()]+)\\)$';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('allowance_flag_events', (t) => {
    t.text('actor');
  });
  await knex.raw(
    `UPDATE allowance_flag_events SET actor = substring(reason from ?), reason = regexp_replace(reason, ?, '') WHERE reason ~ ?`,
    [ACTOR_SUFFIX, ACTOR_SUFFIX, ACTOR_SUFFIX],
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw("UPDATE allowance_flag_events SET reason = reason || ' (' || actor || ')' WHERE actor IS NOT NULL");
  await knex.schema.alterTable('allowance_flag_events', (t) => {
    t.dropColumn('actor');
  });
}
