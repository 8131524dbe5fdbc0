import type { CreditReportData } from './schemas/index.js';
import type { CompanyQueryShape, CompanyRow } from './company-query.js';
import * as part from './assemble-company-parts.js';

// decisions.md: the credit report returns up to 5 years, newest first, without metrics.
export const creditReportShape: CompanyQueryShape = { holders: ['shareholder'], officers: true, branches: false, years: 5, metrics: false };

export function assembleCreditReport(row: CompanyRow): CreditReportData {
  return {
    id: String(row.id),
    isConsolidated: row.is_consolidated,
    latestFiledYear: row.latest_filed_year,
    identity: { ...part.identity(row), foreignOwned: row.foreign_owned, controllingEntity: row.controlling_entity },
    registry: part.registry(row.registry),
    headcount: part.headcount(row.headcount),
    risk: part.risk(row),
    stateAids: part.stateAids(row.state_aids),
    ownership: part.holders(row.holders, 'shareholder'),
    officers: part.officers(row.officers),
    latest: part.latest(row),
    financials: part.snapshots(row.years),
  };
}
