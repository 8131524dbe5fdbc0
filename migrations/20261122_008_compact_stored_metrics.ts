import type { Knex } from 'knex';

// company_years.metrics: each line item goes from {"slug":s,"value":v,...} to [s, v] or
// [s, v, {...the other fields}] (StoredMetricRow in core/companies/derive-year-figures.ts).
// The keys were a third of the bytes every import and report handles. Rows already in the
// new form are left alone, so the conversion can be re-run. The writer's version moved with
// it, so the next import of unchanged dossiers rewrites them once in its own form.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE company_years y SET metrics = (
      SELECT coalesce(json_agg(CASE WHEN r.rest = '{}'::jsonb THEN json_build_array(t.e -> 'slug', t.e -> 'value')
                                    ELSE json_build_array(t.e -> 'slug', t.e -> 'value', r.rest::json) END ORDER BY t.ord), '[]'::json)
      FROM json_array_elements(y.metrics) WITH ORDINALITY AS t(e, ord),
           LATERAL (SELECT t.e::jsonb - 'slug' - 'value' AS rest) r)
    WHERE json_typeof(y.metrics -> 0) = 'object'`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    UPDATE company_years y SET metrics = (
      SELECT coalesce(json_agg((jsonb_build_object('slug', t.e -> 0, 'value', t.e -> 1) || coalesce((t.e -> 2)::jsonb, '{}'::jsonb))::json ORDER BY t.ord), '[]'::json)
      FROM json_array_elements(y.metrics) WITH ORDINALITY AS t(e, ord))
    WHERE json_typeof(y.metrics -> 0) = 'array'`);
}
