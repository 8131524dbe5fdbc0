import type { Knex } from 'knex';
import { frozenFoldSql } from './20261127_037_company_search_order.js';

// The company search by name compared names as stored: "forli" scored "Forlì Trasporti" 0.67, as
// an unrelated name, and "citta" missed "Città" where the accented letter cut the word short of
// the similarity threshold. Callers type names in ASCII (keyboards without accented capitals,
// registries writing "CITTA'"), as the municipality filter already allows; and legal forms with
// dots or without ("S.r.l.", "SRL"), of which "srl" matched "Srls" better than "S.r.l.", whose
// dots made three words of one letter. The search now ranks the names folded as the municipality
// is (case, accents, an apostrophe standing for one), and without dots, on a GiST trigram index
// of that fold built like migration 038's (the nearest names, in order), and a GIN one like
// migration 001's (fragments anywhere in a name, and the names similar to the query among a
// filter's few rows: by the GiST index alone, a name in Milano took 36 ms instead of 16 at
// 300,000 companies). The people search groups and scores names folded alike, but finds them
// through migration 001's indexes of the names as stored: GIN indexes of officers' and holders'
// names folded made an import 13% slower (3,831 companies/s before this migration, 3,338 with
// them, 3,661 without: docs/benchmark.md), and an accent costs most names little of their
// similarity (docs/mcp.md says which it costs more).
//
// The fold is a SQL function, fold_name, so that the searches' several uses of it (the window's
// condition and order, the score, the tie-break, the cursor, a person's key) stay short; Postgres
// inlines it, and the planner matches the search's expression to the index's. Its body is this
// release's copy of foldNameSql (core/companies/fold-text.ts; a test holds the two equal). A
// change to the fold needs a new function and a new index: replacing this function's body would
// leave the index holding names folded the old way.
//
// The indexes of the names as stored (001's GIN, 038's GiST) stay: the previous release's search
// uses them, during a rolling upgrade and after a rollback (migrations/index.ts). They go once no
// release in service reads them. Built CONCURRENTLY, outside a transaction, as migration 038's.
// What the new indexes cost an import, measured: docs/benchmark.md, 28 Nov.
export const config = { transaction: false };

const INDEXES: Array<[string, string]> = [
  ['companies_folded_name_nearest_idx', 'companies USING gist (fold_name(legal_name) gist_trgm_ops (siglen = 256))'],
  ['companies_folded_name_trgm_idx', 'companies USING gin (fold_name(legal_name) gin_trgm_ops)'],
];

// PARALLEL UNSAFE though it is safe: a statement calling it is planned without parallel workers.
// With the fold's cost in its estimate, the planner made the search's fragment window (which runs
// only when the nearest names do not fill theirs, and then reads a few rows) a parallel scan, and
// launching its two workers took 5 ms of a 25 ms search (docs/benchmark.md, 28 Nov).
export const FOLD_FUNCTION = `CREATE OR REPLACE FUNCTION fold_name(text) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL UNSAFE
  AS $fold$ SELECT replace(${frozenFoldSql('$1')}, '.', '') $fold$`;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(FOLD_FUNCTION);
  for (const [name, definition] of INDEXES) {
    // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
    await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
    await knex.raw(`CREATE INDEX CONCURRENTLY ${name} ON ${definition}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [name] of INDEXES) await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${name}`);
  await knex.raw('DROP FUNCTION IF EXISTS fold_name(text)');
}
