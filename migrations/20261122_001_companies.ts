import type { Knex } from 'knex';

// Company data. Small nullable objects of the spec (registry, headcount, state aids) are jsonb
// because "null" and "object with null fields" are different answers; risk flags and the
// denormalised latest-year figures are columns because search and peer selection filter on them.
// Per-year line items are one jsonb array per company-year: one row per metric would be ~50
// rows per year and make both import and report assembly an order of magnitude slower.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE EXTENSION IF NOT EXISTS pg_trgm');

  await knex.schema.createTable('companies', (t) => {
    t.bigIncrements('id').primary();
    t.text('fiscal_code').notNullable().unique(); // upper case; 11 digits or 16 characters
    t.text('vat_number'); // upper case, without the IT prefix
    t.text('legal_name');
    t.text('legal_form');
    t.integer('founding_year');
    t.date('incorporation_date');
    t.boolean('is_quoted');
    t.text('nace_code');
    t.text('nace_section');
    t.text('ateco_code');
    t.jsonb('address'); // Address | null
    t.text('province'); // sigla, e.g. MI: search filter
    t.text('municipality'); // comune name: search filter
    t.date('activity_start_date');
    t.integer('dissolution_year');
    t.boolean('foreign_owned');
    t.text('controlling_entity');
    t.boolean('is_consolidated').notNullable().defaultTo(false);
    t.integer('latest_filed_year');
    t.jsonb('registry'); // Registry | null
    t.jsonb('headcount'); // Headcount | null
    t.boolean('risk_protests_of_bill');
    t.boolean('risk_insolvency_proceedings');
    t.boolean('risk_insolvency_applications');
    t.boolean('risk_asset_encumbrances');
    t.boolean('risk_officers_with_risk_indicators');
    t.jsonb('state_aids'); // StateAids | null
    // Latest non-forecast year, denormalised for the profile branch rule and peer search.
    t.text('size'); // micro | small | medium | large
    t.bigInteger('latest_revenue'); // euro
    t.bigInteger('latest_total_assets'); // euro
    t.integer('latest_employees');
    t.text('source').notNullable().defaultTo('import'); // e.g. "synthetic-sample"
    // Hash of the imported dossier: a re-import compares it and leaves unchanged rows untouched.
    t.text('content_hash');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('CREATE INDEX companies_vat_number_idx ON companies (vat_number)');
  await knex.raw('CREATE INDEX companies_legal_name_trgm_idx ON companies USING gin (legal_name gin_trgm_ops)');
  await knex.raw("CREATE INDEX companies_peer_idx ON companies (substring(nace_code from 1 for 2), latest_revenue)");
  await knex.raw('CREATE INDEX companies_nace_section_idx ON companies (nace_section)');
  await knex.raw('CREATE INDEX companies_province_idx ON companies (province)');

  // Shareholders, beneficial owners and subsidiaries. related_company_id links to another
  // company of the store when known, which is what ownership chains walk.
  await knex.schema.createTable('company_holders', (t) => {
    t.bigInteger('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.text('relation').notNullable(); // shareholder | beneficial_owner | subsidiary
    t.smallint('position').notNullable();
    t.text('name');
    t.double('share'); // fraction 0..1
    t.text('related_fiscal_code');
    t.bigInteger('related_company_id').references('companies.id').onDelete('SET NULL');
    t.primary(['company_id', 'relation', 'position']);
  });
  await knex.raw("ALTER TABLE company_holders ADD CONSTRAINT company_holders_relation_chk CHECK (relation IN ('shareholder','beneficial_owner','subsidiary'))");
  await knex.raw('CREATE INDEX company_holders_related_idx ON company_holders (related_company_id)');
  await knex.raw('CREATE INDEX company_holders_related_fc_idx ON company_holders (related_fiscal_code)');
  await knex.raw('CREATE INDEX company_holders_name_trgm_idx ON company_holders USING gin (name gin_trgm_ops)');

  await knex.schema.createTable('company_officers', (t) => {
    t.bigInteger('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.smallint('position').notNullable();
    t.text('name');
    t.text('role');
    t.text('role_category').notNullable();
    t.primary(['company_id', 'position']);
  });
  await knex.raw('CREATE INDEX company_officers_name_trgm_idx ON company_officers USING gin (name gin_trgm_ops)');

  await knex.schema.createTable('company_branches', (t) => {
    t.bigInteger('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.smallint('position').notNullable();
    t.text('legal_name').notNullable();
    t.jsonb('address');
    t.primary(['company_id', 'position']);
  });

  // One fiscal year: the AnnualSnapshot columns plus every reported line item of that year as
  // a JSON array of {slug, value, previousValue?, yoyChange?, marketValue?, score?}; names,
  // categories and units come from metric_definitions. Only slug and value are always there:
  // previousValue/yoyChange are stored only when they differ from the ones derived from the
  // year before (core/companies metricChanges), marketValue/score only when not null: a year
  // of ~50 items is ~2 kB of text.
  // `json`, not `jsonb`: the array is only ever stored whole and served whole, so json's
  // input check and verbatim text beat jsonb's conversion both ways (import CPU per company
  // about halved; the report copies the text instead of printing jsonb). The few queries that
  // look inside use json_array_elements. ~2 kB is just over the 2 kB TOAST threshold, so the
  // value is compressed: with lz4 where the server has it (about 3x cheaper than pglz).
  await knex.schema.createTable('company_years', (t) => {
    t.bigInteger('company_id').notNullable().references('companies.id').onDelete('CASCADE');
    t.smallint('year').notNullable();
    t.boolean('is_forecasted').notNullable().defaultTo(false);
    t.text('size');
    t.date('statement_date');
    t.integer('employees');
    t.double('employees_yoy');
    t.json('metrics').notNullable().defaultTo('[]');
    t.primary(['company_id', 'year']);
  });
  const { rows: [lz4] } = await knex.raw<{ rows: { available: boolean }[] }>(
    "SELECT 'lz4' = ANY(enumvals) AS available FROM pg_settings WHERE name = 'default_toast_compression'");
  if (lz4?.available) await knex.raw('ALTER TABLE company_years ALTER COLUMN metrics SET COMPRESSION lz4');

  await knex.schema.createTable('metric_definitions', (t) => {
    t.text('slug').primary();
    t.text('name').notNullable();
    t.text('name_it');
    t.specificType('categories', 'text[]').notNullable().defaultTo('{}');
    t.text('unit');
    t.smallint('display_order').notNullable().defaultTo(0);
  });
}

export async function down(knex: Knex): Promise<void> {
  for (const table of ['metric_definitions', 'company_years', 'company_branches', 'company_officers', 'company_holders', 'companies']) {
    await knex.schema.dropTableIfExists(table);
  }
}
