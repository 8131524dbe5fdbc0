import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import type { Db } from '../db/index.js';
import { deriveYearFigures, latestFigures } from './derive-year-figures.js';
import { upsertMetricDefinitions } from './write-metric-definitions.js';
import type { CompanyDossier } from './schemas/index.js';

export interface UpsertResult {
  created: number;
  updated: number;
  unchanged: number;
}

// Bump when what is derived from a dossier changes (a new derived column, a different rule):
// every company's hash then differs and the next import rewrites it.
const WRITER_VERSION = '1';

// Statements carry one JSON document per table (json_to_recordset), so a chunk costs a
// handful of round trips whatever its size; the chunk bounds the size of one parameter.
const CHUNK = 500;

/**
 * Upserts companies by fiscal code, in one transaction. A company whose stored form hashes
 * the same as the stored one is not touched at all (updated_at stays); a changed one has its
 * columns updated and its holders, officers, branches and years replaced. Holders that name a
 * company's fiscal code are linked to it, also when that company arrives in a later batch.
 * Dossiers repeating a fiscal code within one call collapse to the last one; the counts are
 * of distinct companies.
 */
export async function upsertCompanies(db: Db, dossiers: CompanyDossier[]): Promise<UpsertResult> {
  const distinct = [...new Map(dossiers.map((d) => [d.fiscalCode, d])).values()];
  const result: UpsertResult = { created: 0, updated: 0, unchanged: 0 };
  if (distinct.length === 0) return result;
  await db.transaction(async (trx) => {
    await upsertMetricDefinitions(trx, distinct);
    for (let i = 0; i < distinct.length; i += CHUNK) {
      const chunk = await writeChunk(trx, distinct.slice(i, i + CHUNK));
      result.created += chunk.created;
      result.updated += chunk.updated;
      result.unchanged += chunk.unchanged;
    }
  });
  return result;
}

/**
 * A dossier in its stored form: the company row, and each child table's rows as JSON text
 * (comma-separated objects, no brackets) ready to be spliced into one statement's parameter.
 * The content hash is taken over exactly this text, so the JSON is built once per company and
 * an unchanged company costs no more than building it.
 */
interface PreparedCompany {
  fiscalCode: string;
  row: ReturnType<typeof companyRow> & { content_hash: string };
  children: Record<ChildTable, string>;
}
type ChildTable = 'holders' | 'officers' | 'branches' | 'years';

function prepare(d: CompanyDossier): PreparedCompany {
  const row = companyRow(d);
  const children = childJson(d);
  const hash = createHash('sha1').update(WRITER_VERSION).update(JSON.stringify(row));
  for (const table of CHILD_TABLES) hash.update(`\n${children[table]}`);
  return { fiscalCode: d.fiscalCode, row: { ...row, content_hash: hash.digest('base64url') }, children };
}

const CHILD_TABLES: readonly ChildTable[] = ['holders', 'officers', 'branches', 'years'];

async function writeChunk(trx: Knex.Transaction, dossiers: CompanyDossier[]): Promise<UpsertResult> {
  const prepared = dossiers.map(prepare);
  const { rows: written } = await trx.raw<{ rows: { id: number; fiscal_code: string; inserted: boolean }[] }>(UPSERT_COMPANIES_SQL, [JSON.stringify(prepared.map((p) => p.row))]);

  const changedCodes = new Set(written.map((w) => w.fiscal_code));
  const updatedIds = written.filter((w) => !w.inserted).map((w) => w.id);
  const createdCodes = written.filter((w) => w.inserted).map((w) => w.fiscal_code);

  if (updatedIds.length > 0) await trx.raw(DELETE_CHILDREN_SQL, [updatedIds, updatedIds, updatedIds, updatedIds]);
  if (written.length > 0) {
    const changed = prepared.filter((p) => changedCodes.has(p.fiscalCode));
    const payload = (table: ChildTable) => `[${changed.map((p) => p.children[table]).filter((json) => json.length > 0).join(',')}]`;
    await trx.raw(INSERT_CHILDREN_SQL, CHILD_TABLES.map(payload));
  }
  // Holders written earlier that name a company created just now.
  if (createdCodes.length > 0) await trx.raw(LINK_HOLDERS_SQL, [createdCodes]);

  return { created: createdCodes.length, updated: updatedIds.length, unchanged: dossiers.length - written.length };
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

// Child rows carry the company's fiscal code (fc), joined to its id in SQL: the JSON is built
// (and hashed) before the upsert tells us the ids.
function childJson(d: CompanyDossier): Record<ChildTable, string> {
  const fc = d.fiscalCode;
  const holders: unknown[] = [];
  const relations = [['shareholder', d.shareholders], ['beneficial_owner', d.beneficialOwners], ['subsidiary', d.subsidiaries]] as const;
  for (const [relation, list] of relations) {
    list.forEach((h, position) => holders.push({ fc, relation, position, name: h.name, share: h.share, related_fiscal_code: h.fiscalCode }));
  }
  const officers = d.officers.map((o, position) => ({ fc, position, name: o.name, role: o.role, role_category: o.roleCategory }));
  const branches = d.branches.map((b, position) => ({ fc, position, legal_name: b.legalName, address: b.address }));
  const years = deriveYearFigures(d.years).map((y) => ({
    fc, year: y.year, is_forecasted: y.isForecasted, size: y.size, statement_date: y.statementDate,
    employees: y.employees, employees_yoy: y.employeesYoY, metrics: y.metrics,
  }));
  // Stringified as arrays, then unwrapped, so rows can be spliced without re-serialising.
  const unwrap = (rows: unknown[]) => (rows.length === 0 ? '' : JSON.stringify(rows).slice(1, -1));
  return { holders: unwrap(holders), officers: unwrap(officers), branches: unwrap(branches), years: unwrap(years) };
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

// Holders link to their company when it is already stored (including earlier in this batch).
const INSERT_CHILDREN_SQL = `
WITH h AS (
  INSERT INTO company_holders (company_id, relation, position, name, share, related_fiscal_code, related_company_id)
  SELECT c.id, r.relation, r.position, r.name, r.share, r.related_fiscal_code, rc.id
  FROM json_to_recordset(?::json) AS r(fc text, relation text, position smallint, name text, share float8, related_fiscal_code text)
  JOIN companies c ON c.fiscal_code = r.fc
  LEFT JOIN companies rc ON rc.fiscal_code = r.related_fiscal_code
), o AS (
  INSERT INTO company_officers (company_id, position, name, role, role_category)
  SELECT c.id, r.position, r.name, r.role, r.role_category
  FROM json_to_recordset(?::json) AS r(fc text, position smallint, name text, role text, role_category text)
  JOIN companies c ON c.fiscal_code = r.fc
), b AS (
  INSERT INTO company_branches (company_id, position, legal_name, address)
  SELECT c.id, r.position, r.legal_name, r.address
  FROM json_to_recordset(?::json) AS r(fc text, position smallint, legal_name text, address jsonb)
  JOIN companies c ON c.fiscal_code = r.fc
)
INSERT INTO company_years (company_id, year, is_forecasted, size, statement_date, employees, employees_yoy, metrics)
SELECT c.id, r.year, r.is_forecasted, r.size, r.statement_date, r.employees, r.employees_yoy, r.metrics
FROM json_to_recordset(?::json)
  AS r(fc text, year smallint, is_forecasted boolean, size text, statement_date date, employees int, employees_yoy float8, metrics jsonb)
JOIN companies c ON c.fiscal_code = r.fc`;

const LINK_HOLDERS_SQL = `
UPDATE company_holders h SET related_company_id = c.id
FROM companies c
WHERE c.fiscal_code = ANY(?::text[]) AND h.related_fiscal_code = c.fiscal_code AND h.related_company_id IS NULL`;
