import type { Knex } from 'knex';

// One threshold per organization, kind and value: a second identical one only fired the same
// webhook twice and showed the same banner twice. Duplicates already saved are folded into the
// oldest (its fired state kept), then the index makes a repeat a refusal the form can explain.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    DELETE FROM alert_thresholds t
     USING alert_thresholds keep
     WHERE keep.organization_id = t.organization_id AND keep.kind = t.kind AND keep.value = t.value
       AND (keep.created_at, keep.id) < (t.created_at, t.id)`);
  await knex.raw('CREATE UNIQUE INDEX alert_thresholds_one_per_value ON alert_thresholds (organization_id, kind, value)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX alert_thresholds_one_per_value');
}
