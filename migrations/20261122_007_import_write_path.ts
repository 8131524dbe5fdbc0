import type { Knex } from 'knex';

// Two changes to what an import costs the database.
//
// A year's metrics (~2.1 kB of JSON, at most ~2.7 kB) sit just over Postgres's 2 kB TOAST
// threshold, so every year row was compressed on the way in and decompressed on every read.
// Without lz4 (the embedded server has only pglz) that compression was a fifth of the
// import's database CPU. Rows up to 4 kB now stay inline and uncompressed: ~3 rows per 8 kB
// page instead of ~6, and no compression work either way. Longer rows are still compressed.
// (Migration 008 then made the stored line items positional, ~1.4 kB a year: most rows now
// fall under the threshold anyway, and the few longer ones still stay uncompressed.)
//
// The index on holders' fiscal codes serves only linking (a holder to the stored company it
// names), which looks only at holders not linked yet: it now holds just those, so it costs
// nothing for the holders linked on arrival and stays small as links are made.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE company_years SET (toast_tuple_target = 4096)');
  await knex.raw('DROP INDEX company_holders_related_fc_idx');
  await knex.raw(`CREATE INDEX company_holders_unlinked_fc_idx ON company_holders (related_fiscal_code)
    WHERE related_company_id IS NULL AND related_fiscal_code IS NOT NULL`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX company_holders_unlinked_fc_idx');
  await knex.raw('CREATE INDEX company_holders_related_fc_idx ON company_holders (related_fiscal_code)');
  await knex.raw('ALTER TABLE company_years RESET (toast_tuple_target)');
}
