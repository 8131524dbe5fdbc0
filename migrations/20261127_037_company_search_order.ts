import type { Knex } from 'knex';

// The company search (core/companies/search-companies.ts) returns a page in (name, id) order.
// Without a filter's rows in that order, a search by filters alone read every matching company
// and sorted them for each page: at a million companies about 0.3 s for a province or a NACE
// section, 0.6 s for a municipality (which no index served: every company's name folded) and
// 0.9 s with no filter, growing with the table (docs/benchmark.md, "Company search at a million
// companies"). These indexes hand over the page's rows already in order, from the cursor on:
// - the municipality as the search folds it (fold-text.ts, foldAccentsSql: case,
//   accents and an apostrophe standing for one), then the order;
// - the province, then the order; it replaces companies_province_idx, of which it is a superset;
// - the order alone, for no filter or filters most companies pass (a NACE section, status, size,
//   legal form): the first rows in order that pass them make the page.
// Built CONCURRENTLY, outside a transaction, as migration 028's: an import keeps writing companies
// and a plain build would hold it. The previous release's search is served by them too (its
// municipality filter also compares the folded name): safe in a rolling upgrade.
export const config = { transaction: false };

// Frozen copy of foldAccentsSql('municipality') as this release has it: a migration imports no
// application code, and the planner uses the index only for the very expression the search
// writes. A test holds the two equal; a change to the fold needs a new migration and index.
const ACCENTED_VOWELS: Record<string, string> = { a: 'àáâä', e: 'èéêë', i: 'ìíîï', o: 'òóôö', u: 'ùúûü' };
const FOLDS: Array<[string, string]> = [
  ...Object.entries(ACCENTED_VOWELS).flatMap(([plain, accented]) => [...accented].flatMap((ch) => [[ch, plain], [ch.toUpperCase(), plain]] as Array<[string, string]>)),
  ...['\u0300', '\u0301', '\u0302', '\u0308'].map((mark): [string, string] => [mark, '']),
];
/** The fold of `expression`, as foldAccentsSql writes it in this release (migration 040 indexes names so). */
export const frozenFoldSql = (expression: string) => `regexp_replace(replace(${FOLDS.reduce((sql, [from, to]) => `replace(${sql}, '${from}', '${to}')`, `lower(${expression})`)}, '\u2019', ''''), '([aeiou])''([^a-z]|$)', '\\1\\2', 'g')`;
export const foldedMunicipality = frozenFoldSql('municipality');

const ORDER = "coalesce(legal_name, ''), id";
const INDEXES: Array<[string, string]> = [
  ['companies_municipality_search_idx', `(${foldedMunicipality}), ${ORDER}`],
  ['companies_province_search_idx', `province, ${ORDER}`],
  ['companies_search_order_idx', ORDER],
];

export async function up(knex: Knex): Promise<void> {
  for (const [name, columns] of INDEXES) {
    // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
    await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await knex.raw(`CREATE INDEX CONCURRENTLY ${name} ON companies (${columns})`);
  }
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS companies_province_idx');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX CONCURRENTLY IF EXISTS companies_province_idx');
  await knex.raw('CREATE INDEX CONCURRENTLY companies_province_idx ON companies (province)');
  for (const [name] of INDEXES) await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
}
