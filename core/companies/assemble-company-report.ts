import { FISCAL_YEARS, type CompanyReportData } from './schemas/index.js';
import type { CompanyQueryShape, CompanyRow } from './company-query.js';
import type { MetricDefinitions } from './read-metric-definitions.js';
import * as part from './assemble-company-parts.js';

// decisions.md: the company report returns up to 10 years, newest first, with every metric.
export const companyReportShape: CompanyQueryShape = {
  holders: ['shareholder', 'beneficial_owner', 'subsidiary'], officers: true, branches: true, years: 10, metrics: true,
};

/**
 * Every year on file with its line items, for the metrics tool: the report's ten newest years
 * leave out a company's older ones, and with forecasts among them, filed ones too. The fiscal
 * years a store may hold (FISCAL_YEARS) bound the count.
 */
export const companyHistoryShape: CompanyQueryShape = {
  holders: [], officers: false, branches: false, years: FISCAL_YEARS.max - FISCAL_YEARS.min + 1, metrics: true,
};

/** A company's name and codes and every year on file, as the report's financials show each year. */
export interface CompanyHistory {
  identity: Pick<CompanyReportData['identity'], 'fiscalCode' | 'legalName'>;
  financials: CompanyReportData['financials'];
}

export function assembleCompanyHistory(row: CompanyRow, definitions: MetricDefinitions): CompanyHistory {
  const years = row.years ?? [];
  return {
    identity: { fiscalCode: row.fiscal_code, legalName: row.legal_name },
    financials: financialsOf(years, years.length, definitions),
  };
}

/** The newest `count` years, each with its line items' previous values and changes (from the year after it in `years`, the one before in time). */
function financialsOf(years: NonNullable<CompanyRow['years']>, count: number, definitions: MetricDefinitions): CompanyReportData['financials'] {
  return years.slice(0, count).map((y, i) => ({ ...part.snapshot(y), metrics: part.metrics(y, years[i + 1], definitions) }));
}

export function assembleCompanyReport(row: CompanyRow, definitions: MetricDefinitions): CompanyReportData {
  const years = row.years ?? [];
  return {
    isConsolidated: row.is_consolidated,
    latestFiledYear: row.latest_filed_year,
    identity: {
      ...part.identity(row),
      activityStartDate: row.activity_start_date,
      dissolutionYear: row.dissolution_year,
      foreignOwned: row.foreign_owned,
      controllingEntity: row.controlling_entity,
    },
    registry: part.registry(row.registry),
    headcount: part.headcount(row.headcount),
    risk: part.risk(row),
    stateAids: part.stateAids(row.state_aids),
    ownership: {
      shareholders: part.holders(row.holders, 'shareholder'),
      beneficialOwners: part.holders(row.holders, 'beneficial_owner'),
      subsidiaries: part.holders(row.holders, 'subsidiary'),
    },
    officers: part.officers(row.officers),
    branches: part.branches(row.branches),
    latest: part.latest(row),
    // `years` has one year more than shown, for the oldest shown year's previous values.
    financials: financialsOf(years, companyReportShape.years, definitions),
  };
}

/** Whether the report names a slug the definition cache does not know. A loop, not a list of
 * every slug: this runs on every report read, and a report has hundreds of line items. */
export function namesUnknownSlug(row: CompanyRow, definitions: MetricDefinitions): boolean {
  for (const y of row.years ?? []) for (const m of y.metrics ?? []) if (!definitions.has(m[0])) return true;
  return false;
}
