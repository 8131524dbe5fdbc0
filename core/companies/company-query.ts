import type { Address, CompanySize, Headcount, LegalForm, NaceSection, Registry, RoleCategory, StateAids } from './schemas/index.js';
import type { StoredMetricRow } from './derive-year-figures.js';

// The SQL that reads one company for an endpoint: the company row plus, as json aggregates in
// the same statement, exactly the children that endpoint shows. One round trip per company,
// whatever the number of officers or years.

/** Identity columns: enough for a peer, whose identity is all the profile shows of it. */
export interface CompanyIdentityRow {
  id: number;
  fiscal_code: string;
  vat_number: string | null;
  legal_name: string | null;
  legal_form: LegalForm | null;
  founding_year: number | null;
  incorporation_date: string | null;
  is_quoted: boolean | null;
  nace_code: string | null;
  nace_section: NaceSection | null;
  address: Address | null;
  latest: SnapshotJson | null;
}

export interface CompanyRow extends CompanyIdentityRow {
  activity_start_date: string | null;
  dissolution_year: number | null;
  foreign_owned: boolean | null;
  controlling_entity: string | null;
  is_consolidated: boolean;
  latest_filed_year: number | null;
  registry: Registry | null;
  headcount: Headcount | null;
  risk_protests_of_bill: boolean | null;
  risk_insolvency_proceedings: boolean | null;
  risk_insolvency_applications: boolean | null;
  risk_asset_encumbrances: boolean | null;
  risk_officers_with_risk_indicators: boolean | null;
  state_aids: StateAids | null;
  latest_revenue: number | null;
  latest_total_assets: number | null;
  latest_employees: number | null;
  /** Aggregates: null when the query did not ask for them or there are none. */
  holders: HolderJson[] | null;
  officers: OfficerJson[] | null;
  branches: BranchJson[] | null;
  years: SnapshotJson[] | null;
}

export interface HolderJson { relation: 'shareholder' | 'beneficial_owner' | 'subsidiary'; name: string | null; share: number | null }
export interface OfficerJson { name: string | null; role: string | null; roleCategory: RoleCategory }
export interface BranchJson { legalName: string; address: Address | null }
export interface SnapshotJson {
  year: number;
  isForecasted: boolean;
  size: CompanySize | null;
  statementDate: string | null;
  employees: number | null;
  employeesYoY: number | null;
  metrics?: StoredMetricRow[];
}

export interface PeersRow {
  peer_count: number;
  peers: CompanyIdentityRow[] | null;
}

export interface CompanyQueryShape {
  /** Which holder relations to aggregate; [] for none. */
  holders: readonly HolderJson['relation'][];
  officers: boolean;
  branches: boolean;
  /** Newest years to show, 0 for none. */
  years: number;
  metrics: boolean;
}

const IDENTITY_COLUMNS = 'id, fiscal_code, vat_number, legal_name, legal_form, founding_year, incorporation_date, is_quoted, nace_code, nace_section, address';
// Named, not c.*: the statements are prepared once per connection, and a prepared statement
// whose result columns change under it (a migration adding a column) fails.
const COMPANY_COLUMNS = `${IDENTITY_COLUMNS}, activity_start_date, dissolution_year, foreign_owned, controlling_entity, is_consolidated,
  latest_filed_year, registry, headcount, risk_protests_of_bill, risk_insolvency_proceedings, risk_insolvency_applications,
  risk_asset_encumbrances, risk_officers_with_risk_indicators, state_aids, latest_revenue, latest_total_assets, latest_employees`;
const prefixed = (alias: string, columns: string) => columns.split(',').map((c) => `${alias}.${c.trim()}`).join(', ');

const snapshot = (alias: string, metrics: boolean) => `json_build_object('year', ${alias}.year, 'isForecasted', ${alias}.is_forecasted, 'size', ${alias}.size,
  'statementDate', ${alias}.statement_date, 'employees', ${alias}.employees, 'employeesYoY', ${alias}.employees_yoy${metrics ? `, 'metrics', ${alias}.metrics` : ''})`;

const latestOf = (alias: string) =>
  `(SELECT ${snapshot('ly', false)} FROM company_years ly WHERE ly.company_id = ${alias}.id AND ly.year = ${alias}.latest_filed_year) AS latest`;

const quote = (s: string) => `'${s.replace(/'/g, "''")}'`;

/**
 * Parameters: $1 the upper-cased code, $2 the VAT number to try. An exact fiscal-code match
 * wins over a VAT-number match when the two would find different companies.
 */
export function companySql(shape: CompanyQueryShape): string {
  const parts = [prefixed('c', COMPANY_COLUMNS), latestOf('c')];
  if (shape.holders.length > 0) {
    parts.push(`(SELECT json_agg(json_build_object('relation', h.relation, 'name', h.name, 'share', h.share) ORDER BY h.relation, h.position)
      FROM company_holders h WHERE h.company_id = c.id AND h.relation IN (${shape.holders.map(quote).join(', ')})) AS holders`);
  }
  if (shape.officers) {
    parts.push(`(SELECT json_agg(json_build_object('name', o.name, 'role', o.role, 'roleCategory', o.role_category) ORDER BY o.position)
      FROM company_officers o WHERE o.company_id = c.id) AS officers`);
  }
  if (shape.branches) {
    parts.push(`(SELECT json_agg(json_build_object('legalName', b.legal_name, 'address', b.address) ORDER BY b.position)
      FROM company_branches b WHERE b.company_id = c.id) AS branches`);
  }
  if (shape.years > 0) {
    // With metrics, one year more than shown: the oldest shown year's previous values and
    // changes are derived from it (see metricChanges).
    const limit = Math.trunc(shape.years) + (shape.metrics ? 1 : 0);
    parts.push(`(SELECT json_agg(${snapshot('y', shape.metrics)} ORDER BY y.year DESC)
      FROM (SELECT * FROM company_years WHERE company_id = c.id ORDER BY year DESC LIMIT ${limit}) y) AS years`);
  }
  // A VAT number several companies share (the members of a Gruppo IVA): the one with the lowest
  // fiscal code, the same one every time (without the tie-break, whichever row a re-import had
  // moved first). Its own fiscal code names each one.
  return `SELECT ${parts.join(',\n  ')}
FROM (SELECT ${COMPANY_COLUMNS} FROM companies WHERE fiscal_code = $1 OR vat_number = $2 ORDER BY fiscal_code = $1 DESC, fiscal_code LIMIT 1) c`;
}

// Peers: the same NACE division (first two digits of nace_code), nearest in size: by latest
// revenue, or by latest headcount for a company with no revenue on file (large by its 250+
// employees: revenue 0 would make the division's smallest companies its peers). Two index range
// scans outward from the company's figure (companies_peer_idx, companies_peer_employees_idx)
// give the 10 nearest above and below without sorting the division; companies without that
// figure come last. Parameters: $1 division, $2 the company's id, $3 its figure, $4 how many.
export type PeerMeasure = 'latest_revenue' | 'latest_employees';

export const peersSql = (measure: PeerMeasure) => `
WITH above AS (
  SELECT id, ${measure} AS figure FROM companies
  WHERE substring(nace_code from 1 for 2) = $1 AND id <> $2 AND ${measure} >= $3
  ORDER BY ${measure} LIMIT $4
), below AS (
  SELECT id, ${measure} AS figure FROM companies
  WHERE substring(nace_code from 1 for 2) = $1 AND id <> $2 AND ${measure} < $3
  ORDER BY ${measure} DESC LIMIT $4
), unknown AS (
  SELECT id, ${measure} AS figure FROM companies
  WHERE substring(nace_code from 1 for 2) = $1 AND id <> $2 AND ${measure} IS NULL
  ORDER BY id LIMIT $4
), nearest AS (
  SELECT id, abs(figure - $3) AS distance FROM (SELECT * FROM above UNION ALL SELECT * FROM below UNION ALL SELECT * FROM unknown) cand
  ORDER BY distance NULLS LAST, id LIMIT $4
)
SELECT
  -- The company is in its own division: counting the division and taking one off lets the
  -- count read the peer index alone instead of every row of a large division.
  (SELECT greatest(count(*) - 1, 0) FROM companies WHERE substring(nace_code from 1 for 2) = $1)::int AS peer_count,
  (SELECT json_agg(p ORDER BY p.distance NULLS LAST, p.id) FROM (
     SELECT ${prefixed('pc', IDENTITY_COLUMNS)}, n.distance, ${latestOf('pc')}
     FROM nearest n JOIN companies pc ON pc.id = n.id
  ) p) AS peers`;
