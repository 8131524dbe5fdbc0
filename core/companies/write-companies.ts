import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/index.js';
import { deriveYearFigures, latestFigures } from './derive-year-figures.js';
import { uncataloguedMetrics, upsertMetricDefinitions, type MetricDescription } from './write-metric-definitions.js';
import type { CompanyDossier } from './schemas/index.js';

export interface UpsertResult {
  created: number;
  updated: number;
  unchanged: number;
}

// Bump when what is derived from a dossier changes (a new derived column, a different rule):
// every company's hash then differs and the next import rewrites it.
const WRITER_VERSION = '5';

// Each statement carries a whole chunk (one JSON document, or one array per column), so a
// chunk costs a handful of round trips whatever its size; the chunk bounds one parameter's size.
const CHUNK = 500;

/**
 * A dossier in its stored form: the company row as JSON text; for each column of each child
 * table, this company's elements of the Postgres array literal the column is sent as; each
 * year's metrics as JSON text; and its metrics outside the catalogue as it describes them
 * (not hashed: they are checked against the stored definitions whenever it is written). Built
 * once per company (in a parser thread when there are some) and hashed as built, so an
 * unchanged company costs no more than building it. Mostly strings: cheap to send back from a
 * thread, and a batch is then written by joining them, not by serialising hundreds of values
 * per company on the main thread, which also feeds the database.
 */
export interface PreparedCompany {
  readonly fiscalCode: string;
  readonly row: string;
  /** Rows of each child table, in CHILD_TABLES order. */
  readonly rowCounts: readonly number[];
  /** Per child column, in CHILD_TABLES order: this company's array elements, comma-separated ('' with no rows). */
  readonly columns: readonly string[];
  /** The years' metrics JSON texts, in the years' order, joined by METRICS_SEPARATOR ('' with no years). */
  readonly metrics: string;
  readonly definitions: MetricDescription[];
}

type Cell = string | number | boolean | null;

// The child tables as INSERT_CHILDREN_SQL takes them: after each table's company ids, one
// array per column, in this order (years then take their metrics as one text).
const CHILD_TABLES = [
  ['relation', 'position', 'name', 'share', 'related_fiscal_code', 'holder_kind'], // company_holders
  ['position', 'name', 'role', 'role_category'], // company_officers
  ['position', 'legal_name', 'address'], // company_branches
  ['year', 'is_forecasted', 'size', 'statement_date', 'employees', 'employees_yoy'], // company_years
] as const;

export function prepareCompany(d: CompanyDossier): PreparedCompany {
  const row = JSON.stringify(companyRow(d));
  const holders: Cell[][] = [];
  const relations = [['shareholder', d.shareholders], ['beneficial_owner', d.beneficialOwners], ['subsidiary', d.subsidiaries]] as const;
  for (const [relation, list] of relations) {
    list.forEach((h, position) => holders.push([relation, position, h.name, h.share, h.fiscalCode, h.kind]));
  }
  const officers = d.officers.map((o, position): Cell[] => [position, o.name, o.role, o.roleCategory]);
  const branches = d.branches.map((b, position): Cell[] => [position, b.legalName, b.address === null ? null : JSON.stringify(b.address)]);
  const derived = deriveYearFigures(d.years);
  const years = derived.map((y): Cell[] => [y.year, y.isForecasted, y.size, y.statementDate, y.employees, y.employeesYoY]);
  const tables = [holders, officers, branches, years];
  const columns = tables.flatMap((rows, t) => CHILD_TABLES[t]!.map((_, k) => arrayElements(rows, k)));
  const metrics = derived.map((y) => JSON.stringify(y.metrics)).join(METRICS_SEPARATOR);

  // Each column is prefixed with its length, so no two different sets of columns hash alike.
  const hash = createHash('sha1').update(WRITER_VERSION).update(row);
  for (const c of columns) hash.update(`\n${c.length}:${c}`);
  hash.update(`\n${metrics}`);
  return {
    fiscalCode: d.fiscalCode,
    row: `${row.slice(0, -1)},"content_hash":"${hash.digest('base64url')}"}`,
    rowCounts: tables.map((rows) => rows.length),
    columns,
    metrics,
    definitions: uncataloguedMetrics(d),
  };
}

/** The k-th value of each row, as elements of a Postgres array literal (e.g. `"Rossi, Mario",NULL`). */
function arrayElements(rows: readonly Cell[][], k: number): string {
  let out = '';
  for (let r = 0; r < rows.length; r++) {
    const v = rows[r]![k]!;
    if (r > 0) out += ',';
    // Text is quoted with its quotes and backslashes escaped; numbers and booleans as they print.
    out += v === null ? 'NULL' : typeof v === 'string' ? `"${v.replace(/["\\]/g, '\\$&')}"` : String(v);
  }
  return out;
}

/**
 * Upserts companies by fiscal code, in one transaction. A company whose stored form hashes
 * the same as the stored one is not touched at all (updated_at stays); a changed one has its
 * columns updated and its holders, officers, branches and years replaced. Holders that name a
 * company's fiscal code are linked to it, also when that company arrives in a later batch.
 * Dossiers repeating a fiscal code within one call collapse to the last one; the counts are
 * of distinct companies.
 */
export async function upsertCompanies(db: Db, dossiers: CompanyDossier[]): Promise<UpsertResult> {
  return upsertPreparedCompanies(db, dossiers.map(prepareCompany));
}

/** upsertCompanies for dossiers already prepared (the importer prepares each as it is parsed). */
export async function upsertPreparedCompanies(db: Db, companies: readonly PreparedCompany[]): Promise<UpsertResult> {
  const distinct = [...new Map(companies.map((c) => [c.fiscalCode, c])).values()];
  const result: UpsertResult = { created: 0, updated: 0, unchanged: 0 };
  if (distinct.length === 0) return result;
  await db.transaction(async (trx) => {
    // An import is idempotent and re-run to recover (unchanged companies cost only their
    // hash), so losing its last commits in a server crash is acceptable: not waiting for the
    // WAL flush on commit lets Postgres write while we send the next batch. Local to this
    // transaction; the API's own writes keep the server's setting.
    await trx.raw('SET LOCAL synchronous_commit = off');
    // The statements' parameters are whole chunks (megabytes of text). Planned for their values
    // (a custom plan, the default for a one-off statement), they are folded in as constants:
    // the planner splits the metrics text itself and copies the arrays around. A generic plan
    // leaves them parameters, read once at execution; every statement here is an index lookup
    // or a scan of its own parameters either way. Measured: ~8% less database CPU per company.
    await trx.raw('SET LOCAL plan_cache_mode = force_generic_plan');
    await upsertMetricDefinitions(trx, distinct.flatMap((c) => c.definitions));
    for (let i = 0; i < distinct.length; i += CHUNK) {
      const chunk = await writeChunk(trx, distinct.slice(i, i + CHUNK));
      result.created += chunk.created;
      result.updated += chunk.updated;
      result.unchanged += chunk.unchanged;
    }
  });
  return result;
}

async function writeChunk(trx: Knex.Transaction, prepared: PreparedCompany[]): Promise<UpsertResult> {
  const { rows: written } = await trx.raw<{ rows: { id: number; fiscal_code: string; inserted: boolean }[] }>(UPSERT_COMPANIES_SQL, [`[${prepared.map((p) => p.row).join(',')}]`]);

  const idByCode = new Map(written.map((w) => [w.fiscal_code, w.id]));
  const updatedIds = written.filter((w) => !w.inserted).map((w) => w.id);
  const created = written.filter((w) => w.inserted);

  if (updatedIds.length > 0) await trx.raw(DELETE_CHILDREN_SQL, [updatedIds, updatedIds, updatedIds, updatedIds]);
  if (written.length > 0) {
    const changed = prepared.filter((p) => idByCode.has(p.fiscalCode));
    // Children go in with their company's id from RETURNING above: no join back to companies
    // by fiscal code (a scan of the whole table per statement). Each column is one array
    // literal, made by joining the companies' prepared elements.
    const params: string[] = [];
    let column = 0;
    CHILD_TABLES.forEach((names, t) => {
      const ids: number[] = [];
      for (const p of changed) for (let i = 0, id = idByCode.get(p.fiscalCode)!; i < p.rowCounts[t]!; i++) ids.push(id);
      params.push(`{${ids.join(',')}}`);
      for (let k = 0; k < names.length; k++, column++) params.push(`{${changed.map((p) => p.columns[column]!).filter((c) => c !== '').join(',')}}`);
    });
    // Metrics travel as one text of the stored JSON texts joined by a unit separator (U+001F),
    // which JSON.stringify never leaves raw in its output, so splitting on it is exact. Not
    // a text[] (its literal escapes every quote of a year's ~1.4 kB on the way out and back in),
    // nor one JSON array (Postgres would lex every metric twice: to check the array, then to
    // split it); split, each year's text is lexed once, as it becomes json.
    params.push(changed.map((p) => p.metrics).filter((m) => m !== '').join(METRICS_SEPARATOR));
    await trx.raw(INSERT_CHILDREN_SQL, params);
  }
  // Holders written earlier that name a company created just now.
  if (created.length > 0) {
    const codes = created.map((c) => c.fiscal_code);
    await trx.raw(LINK_HOLDERS_SQL, [created.map((c) => c.id), codes, codes]);
  }

  return { created: created.length, updated: updatedIds.length, unchanged: prepared.length - written.length };
}

function companyRow(d: CompanyDossier) {
  const latest = latestFigures(d.years);
  return {
    fiscal_code: d.fiscalCode,
    vat_number: d.vatNumber,
    legal_name: d.legalName,
    legal_form: d.legalForm,
    founding_year: d.foundingYear,
    incorporation_date: d.incorporationDate,
    is_quoted: d.isQuoted,
    nace_code: d.naceCode,
    nace_section: d.naceSection,
    ateco_code: d.atecoCode,
    address: d.address,
    province: d.province,
    municipality: d.municipality,
    activity_start_date: d.activityStartDate,
    dissolution_year: d.dissolutionYear,
    foreign_owned: d.foreignOwned,
    controlling_entity: d.controllingEntity,
    is_consolidated: d.isConsolidated,
    latest_filed_year: latest.latestFiledYear,
    registry: d.registry,
    headcount: d.headcount,
    risk_protests_of_bill: d.risk.protestsOfBill,
    risk_insolvency_proceedings: d.risk.insolvencyProceedings,
    risk_insolvency_applications: d.risk.insolvencyApplications,
    risk_asset_encumbrances: d.risk.assetEncumbrances,
    risk_officers_with_risk_indicators: d.risk.officersWithRiskIndicators,
    state_aids: d.stateAids,
    size: latest.size,
    latest_revenue: latest.revenue,
    latest_total_assets: latest.totalAssets,
    latest_employees: latest.employees,
    source: d.source,
  };
}

const COMPANY_COLUMNS = `fiscal_code text, vat_number text, legal_name text, legal_form text, founding_year int,
  incorporation_date date, is_quoted boolean, nace_code text, nace_section text, ateco_code text, address jsonb,
  province text, municipality text, activity_start_date date, dissolution_year int, foreign_owned boolean,
  controlling_entity text, is_consolidated boolean, latest_filed_year int, registry jsonb, headcount jsonb,
  risk_protests_of_bill boolean, risk_insolvency_proceedings boolean, risk_insolvency_applications boolean,
  risk_asset_encumbrances boolean, risk_officers_with_risk_indicators boolean, state_aids jsonb, size text,
  latest_revenue bigint, latest_total_assets bigint, latest_employees int, source text, content_hash text`;
const COMPANY_NAMES = COMPANY_COLUMNS.split(',').map((c) => c.trim().split(/\s+/)[0]!);

// Rows whose hash matches are skipped by the WHERE of DO UPDATE, so they are neither written
// nor returned: what comes back is exactly the created (xmax = 0) and updated companies.
const UPSERT_COMPANIES_SQL = `
INSERT INTO companies (${COMPANY_NAMES.join(', ')})
SELECT ${COMPANY_NAMES.map((c) => `r.${c}`).join(', ')} FROM json_to_recordset(?::json) AS r(${COMPANY_COLUMNS})
ON CONFLICT (fiscal_code) DO UPDATE SET ${COMPANY_NAMES.filter((c) => c !== 'fiscal_code').map((c) => `${c} = excluded.${c}`).join(', ')}, updated_at = now()
WHERE companies.content_hash IS DISTINCT FROM excluded.content_hash
RETURNING id, fiscal_code, (xmax = 0) AS inserted`;

const DELETE_CHILDREN_SQL = `
WITH h AS (DELETE FROM company_holders WHERE company_id = ANY(?::bigint[])),
     o AS (DELETE FROM company_officers WHERE company_id = ANY(?::bigint[])),
     b AS (DELETE FROM company_branches WHERE company_id = ANY(?::bigint[]))
DELETE FROM company_years WHERE company_id = ANY(?::bigint[])`;

const METRICS_SEPARATOR = '\u001f';

// Holders link to their company when it is already stored (including earlier in this batch):
// one index lookup per holder that names a fiscal code. The years' columns are zipped by
// unnest in the select list (set-returning functions there advance in step), not by ROWS
// FROM: a function scan first copies every row into a tuplestore, which for a chunk's
// metrics (several MB) spills to a temporary file.
const INSERT_CHILDREN_SQL = `
WITH h AS (
  INSERT INTO company_holders (company_id, relation, position, name, share, related_fiscal_code, holder_kind, related_company_id)
  SELECT r.company_id, r.relation, r.position, r.name, r.share, r.related_fiscal_code, r.holder_kind,
    (SELECT rc.id FROM companies rc WHERE rc.fiscal_code = r.related_fiscal_code)
  FROM unnest(?::bigint[], ?::text[], ?::smallint[], ?::text[], ?::float8[], ?::text[], ?::text[])
    AS r(company_id, relation, position, name, share, related_fiscal_code, holder_kind)
), o AS (
  INSERT INTO company_officers (company_id, position, name, role, role_category)
  SELECT * FROM unnest(?::bigint[], ?::smallint[], ?::text[], ?::text[], ?::text[])
), b AS (
  INSERT INTO company_branches (company_id, position, legal_name, address)
  SELECT * FROM unnest(?::bigint[], ?::smallint[], ?::text[], ?::jsonb[])
)
INSERT INTO company_years (company_id, year, is_forecasted, size, statement_date, employees, employees_yoy, metrics)
SELECT unnest(?::bigint[]), unnest(?::smallint[]), unnest(?::boolean[]), unnest(?::text[]), unnest(?::date[]), unnest(?::int[]),
  unnest(?::float8[]), unnest(string_to_array(?::text, E'\\x1f'))::json`;

/**
 * Links every holder that names a stored company by fiscal code but is not linked yet. The
 * importer calls it once at the end when batches were written concurrently (a holder and the
 * company it names, written side by side, did not see each other). It reads only the
 * unlinked holders (a partial index holds just those) and joins them to companies by code.
 */
export async function linkUnlinkedHolders(db: Db): Promise<void> {
  await db.raw(LINK_UNLINKED_HOLDERS_SQL);
}

const LINK_UNLINKED_HOLDERS_SQL = `
UPDATE company_holders h SET related_company_id = c.id
FROM companies c
WHERE h.related_fiscal_code = c.fiscal_code AND h.related_company_id IS NULL`;

// No join: a join lets the planner hash the chunk's codes against every unlinked holder, a
// scan that grows with the import (it was a twelfth of an import's database time); = ANY
// probes the partial index once per code. The few holders found take their company's id
// from the position of its code.
const LINK_HOLDERS_SQL = `
UPDATE company_holders h SET related_company_id = (?::bigint[])[array_position(?::text[], h.related_fiscal_code)]
WHERE h.related_fiscal_code = ANY(?::text[]) AND h.related_company_id IS NULL`;
