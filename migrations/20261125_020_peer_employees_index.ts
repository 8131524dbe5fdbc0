import type { Knex } from 'knex';

// A large company with no revenue on file (large by its 250+ employees) finds its peers by
// headcount (core/companies/company-query.ts, peersSql): the same two range scans outward as
// companies_peer_idx gives the revenue search, instead of sorting its whole division.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX companies_peer_employees_idx ON companies (substring(nace_code from 1 for 2), latest_employees)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX companies_peer_employees_idx');
}
