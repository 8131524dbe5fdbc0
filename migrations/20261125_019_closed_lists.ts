import type { Knex } from 'knex';

// decisions.md closes the lists of sizes, legal forms, NACE sections, officer role categories
// and metric categories, and the import has always refused anything else. The responses now
// declare those lists as enums (the OpenAPI document and the MCP output schemas list them), so
// the columns hold to them too: a value written past the import (by hand, by a script) is
// refused here rather than answered to a client against the schema it was given.
//
// The lists are written out, not imported from core: a migration states the schema as of its
// date. A list that grows takes a migration of its own.
const SIZES = ['micro', 'small', 'medium', 'large'];
const LEGAL_FORMS = ['SRL', 'SRLS', 'SPA', 'SAPA', 'SNC', 'SAS', 'SS', 'SC', 'DI', 'CONSORZIO', 'FONDAZIONE', 'ASSOCIAZIONE', 'ALTRO'];
const NACE_SECTIONS = 'ABCDEFGHIJKLMNOPQRSTU'.split('');
const ROLE_CATEGORIES = ['legal_representative', 'director', 'board_member', 'statutory_auditor', 'auditor', 'manager', 'proxy', 'liquidator', 'other'];
const METRIC_CATEGORIES = ['balance_sheet', 'income_statement', 'assets', 'liabilities', 'equity', 'revenue', 'costs', 'profitability', 'liquidity', 'solvency', 'efficiency', 'ratio'];

const list = (values: string[]) => values.map((v) => `'${v}'`).join(', ');

const CHECKS: [table: string, name: string, condition: string][] = [
  ['companies', 'companies_size_chk', `size IN (${list(SIZES)})`],
  ['companies', 'companies_legal_form_chk', `legal_form IN (${list(LEGAL_FORMS)})`],
  ['companies', 'companies_nace_section_chk', `nace_section IN (${list(NACE_SECTIONS)})`],
  ['company_years', 'company_years_size_chk', `size IN (${list(SIZES)})`],
  ['company_officers', 'company_officers_role_category_chk', `role_category IN (${list(ROLE_CATEGORIES)})`],
  ['metric_definitions', 'metric_definitions_categories_chk', `categories <@ ARRAY[${list(METRIC_CATEGORIES)}]::text[]`],
];

export async function up(knex: Knex): Promise<void> {
  // Added unchecked, then validated: the validation scans the table without blocking reads,
  // and a row already outside a list fails the migration with the constraint's name.
  for (const [table, name, condition] of CHECKS) {
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${name} CHECK (${condition}) NOT VALID`);
    await knex.raw(`ALTER TABLE ${table} VALIDATE CONSTRAINT ${name}`);
  }
}

export async function down(knex: Knex): Promise<void> {
  for (const [table, name] of [...CHECKS].reverse()) await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${name}`);
}
