import type { Knex } from 'knex';

// The company search by name (core/companies/search-companies.ts) ranks companies by word
// similarity to the query. The trigram GIN index (migration 001) finds the matching names but in
// no order: every page scored and sorted all of them, and a name as common as "Rossi Costruzioni"
// took 3-5 s at a million companies, "Ferrari" over a second (docs/benchmark.md, "Company search
// at a million companies"), past the store's 2 s deadline long before Italy's six million. A GiST
// trigram index hands the names over nearest first (`legal_name <->> query`, one minus the word
// similarity), so a page scores a few hundred of them. Signatures of 256 bytes: with smaller ones
// the upper nodes' signatures fill up and the walk to the nearest names reads more of the index
// (with 64 bytes, up to 14 times as long for the same searches); the index is no bigger, 113 MB at
// a million companies either way (its leaves hold the trigrams themselves).
// The GIN index stays: it serves the fragment (ILIKE) matches and the previous release.
// Built CONCURRENTLY, outside a transaction, as migration 037's: an import keeps writing companies
// and a plain build would hold it. The previous release does not use it: safe in a rolling upgrade.
export const config = { transaction: false };

const NAME = 'companies_legal_name_nearest_idx';

export async function up(knex: Knex): Promise<void> {
  // IF EXISTS first: an interrupted CONCURRENTLY build leaves an invalid index behind.
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
  await knex.raw(`CREATE INDEX CONCURRENTLY ${NAME} ON companies USING gist (legal_name gist_trgm_ops (siglen = 256))`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DROP INDEX CONCURRENTLY IF EXISTS ${NAME}`);
}
