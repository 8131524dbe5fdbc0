import type { Knex } from 'knex';

// Every process caches assembled company data (core/companies/company-cache.ts). Company data
// changes only by import; these triggers tell every process, once per committing transaction,
// that it did, so caches are cleared within a notification's latency instead of a TTL.
// Statement-level on purpose: an import of thousands of rows costs one trigger call per
// statement, not per row, and Postgres folds identical notifications of one transaction into
// one. It fires even when a statement changed nothing (an unchanged re-import): a needless
// cache clear, which is cheap. Child tables and metric names are included because the cached
// documents are assembled from them (holders, officers, years, peers, metric names).
const TABLES = ['companies', 'company_holders', 'company_officers', 'company_branches', 'company_years', 'metric_definitions'];

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notify_companies_changed() RETURNS trigger AS $$
    BEGIN
      PERFORM pg_notify('companies_changed', '');
      RETURN NULL;
    END $$ LANGUAGE plpgsql;
  `);
  for (const table of TABLES) {
    await knex.raw(`CREATE TRIGGER ${table}_changed_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION notify_companies_changed()`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const table of TABLES) await knex.raw(`DROP TRIGGER IF EXISTS ${table}_changed_notify ON ${table}`);
  await knex.raw('DROP FUNCTION IF EXISTS notify_companies_changed()');
}
