import { holdsNul, type Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import type { CompanyFinancialsData, CompanyProfileData, CompanyReportData, CreditReportData } from './schemas/index.js';
import { companySql, peersSql, type CompanyRow, type PeersRow } from './company-query.js';
import { assembleCompanyHistory, assembleCompanyReport, companyHistoryShape, companyReportShape, namesUnknownSlug, type CompanyHistory } from './assemble-company-report.js';
import { assembleCreditReport, creditReportShape } from './assemble-credit-report.js';
import { assembleLargeProfile, assembleSmallProfile, companyProfileShape, isLargeProfile, MAX_PEERS, naceDivision } from './assemble-company-profile.js';
import { assembleCompanyFinancials, companyFinancialsShape } from './assemble-company-financials.js';
import { createMetricDefinitionCache, type MetricDefinitionRow, type MetricDefinitions } from './read-metric-definitions.js';
import { runPreparedStoreQuery, storeStatement, type StoreStatement } from './run-store-query.js';

/**
 * The four endpoints' `data`, read from Postgres. Each method returns null when no company
 * matches, and throws AppError upstream_timeout / upstream_error when the store fails.
 */
export interface CompanyStore {
  companyReport(fiscalCode: string): Promise<CompanyReportData | null>;
  creditReport(fiscalCode: string): Promise<CreditReportData | null>;
  companyProfile(taxId: string): Promise<CompanyProfileData | null>;
  companyFinancials(taxId: string): Promise<CompanyFinancialsData | null>;
  /** Every year on file with its line items (the metrics tool's, past the report's ten newest years). Not cached. */
  companyHistory(fiscalCode: string): Promise<CompanyHistory | null>;
  /** The year the company was dissolved, null when it was not: the profile tool's, as the
   * profile's data (the spec's CompanyIdentity) does not say. Cached beside the profile. */
  companyDissolution(taxId: string): Promise<{ dissolutionYear: number | null } | null>;
  /** Re-reads metric names, categories and units (e.g. after an import changed them). */
  reloadMetricDefinitions(): Promise<void>;
  /** Drops the metric definitions held, without reading them now: the next report reads them. */
  forgetMetricDefinitions(): void;
  /** Every metric defined (the catalogue's and imported custom ones), by slug, read again (at
   * most every 5 s) when `wanted` names a slug not held. */
  metricDefinitions(wanted?: readonly string[]): Promise<MetricDefinitions>;
}

export interface CompanyStoreOptions {
  db: Db;
  /** Deadline per database round trip, connection wait included. */
  queryTimeoutMs: number;
  logger: Logger;
}

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * No company is stored under a longer identifier (a codice fiscale has 16 characters, an
 * IT-prefixed VAT number 13; the import refuses any other): a longer one is "no match" without a
 * query. The profile and financials take any tax ID, as long as a URL (kilobytes) or a tool call
 * (up to a megabyte) carries.
 */
export const LONGEST_IDENTIFIER = 16;

/**
 * An identifier in upper case, its ASCII letters only: `toUpperCase` alone turns some other
 * letters into ASCII ones (the dotless ı into I, the long ſ into S), so a code that is not a
 * company's would find it, and be billed.
 */
export function upperCaseIdentifier(text: string): string {
  return NON_ASCII.test(text) ? text.replace(/[a-z]+/g, (letters) => letters.toUpperCase()) : text.toUpperCase();
}

/**
 * How a caller's identifier finds a company: upper case, then the fiscal code, else the VAT
 * number (which is stored without its IT prefix).
 */
export function lookupKeys(input: string): { code: string; vatNumber: string } {
  const code = upperCaseIdentifier(input.trim());
  return { code, vatNumber: /^IT\d{11}$/.test(code) ? code.slice(2) : code };
}

export function createCompanyStore(options: CompanyStoreOptions): CompanyStore {
  const statements = {
    report: storeStatement('report', companySql(companyReportShape)),
    history: storeStatement('history', companySql(companyHistoryShape)),
    credit: storeStatement('credit', companySql(creditReportShape)),
    profile: storeStatement('profile', companySql(companyProfileShape)),
    financials: storeStatement('financials', companySql(companyFinancialsShape)),
    peers: storeStatement('peers', peersSql('latest_revenue')),
    peersByEmployees: storeStatement('peers_by_employees', peersSql('latest_employees')),
    metricDefinitions: storeStatement('metric_definitions', 'SELECT slug, name, categories, unit FROM metric_definitions'),
    // The company companySql finds, by the same rule.
    dissolution: storeStatement('dissolution', 'SELECT dissolution_year FROM companies WHERE fiscal_code = $1 OR vat_number = $2 ORDER BY fiscal_code = $1 DESC, fiscal_code LIMIT 1'),
  };

  const definitions = createMetricDefinitionCache(() => runPreparedStoreQuery<MetricDefinitionRow>(options, 'metric definitions', statements.metricDefinitions, []));

  async function findCompany<R = CompanyRow>(what: string, statement: StoreStatement, input: string): Promise<R | null> {
    const { code, vatNumber } = lookupKeys(input);
    // The spec takes any non-empty tax ID. One holding a NUL matches no company (Postgres text
    // cannot hold it, and would refuse the query as a store failure): the answer is "no match".
    if (code.length === 0 || code.length > LONGEST_IDENTIFIER || holdsNul(code)) return null;
    const rows = await runPreparedStoreQuery<R>(options, what, statement, [code, vatNumber]);
    return rows[0] ?? null;
  }

  /** The metric definitions that name every slug of `row`: read again when it names one not held. */
  async function definitionsFor(row: CompanyRow): Promise<MetricDefinitions> {
    const defs = await definitions.get();
    return namesUnknownSlug(row, defs) ? definitions.refreshForMissing() : defs;
  }

  return {
    async companyReport(fiscalCode) {
      const row = await findCompany('company report', statements.report, fiscalCode);
      return row === null ? null : assembleCompanyReport(row, await definitionsFor(row));
    },

    async companyHistory(fiscalCode) {
      const row = await findCompany('company history', statements.history, fiscalCode);
      return row === null ? null : assembleCompanyHistory(row, await definitionsFor(row));
    },

    async companyDissolution(taxId) {
      const row = await findCompany<{ dissolution_year: number | null }>('company dissolution', statements.dissolution, taxId);
      return row === null ? null : { dissolutionYear: row.dissolution_year };
    },

    async creditReport(fiscalCode) {
      const row = await findCompany('credit report', statements.credit, fiscalCode);
      return row === null ? null : assembleCreditReport(row);
    },

    async companyProfile(taxId) {
      const row = await findCompany('company profile', statements.profile, taxId);
      if (row === null) return null;
      if (!isLargeProfile(row)) return assembleSmallProfile(row);
      const division = naceDivision(row);
      if (division === null) return assembleLargeProfile(row, { peer_count: 0, peers: [] });
      const [peers] = row.latest_revenue === null && row.latest_employees !== null
        ? await runPreparedStoreQuery<PeersRow>(options, 'company peers', statements.peersByEmployees, [division, row.id, row.latest_employees, MAX_PEERS])
        : await runPreparedStoreQuery<PeersRow>(options, 'company peers', statements.peers, [division, row.id, row.latest_revenue ?? 0, MAX_PEERS]);
      return assembleLargeProfile(row, peers ?? { peer_count: 0, peers: [] });
    },

    async companyFinancials(taxId) {
      const row = await findCompany('company financials', statements.financials, taxId);
      return row === null ? null : assembleCompanyFinancials(row);
    },

    forgetMetricDefinitions: () => definitions.forget(),
    async metricDefinitions(wanted = []) {
      const defs = await definitions.get();
      return wanted.some((slug) => !defs.has(slug)) ? definitions.refreshForMissing() : defs;
    },
    async reloadMetricDefinitions() {
      await definitions.reload();
    },
  };
}
