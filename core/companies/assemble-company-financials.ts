import type { CompanyFinancialsData } from './schemas/index.js';
import type { CompanyQueryShape, CompanyRow } from './company-query.js';
import * as part from './assemble-company-parts.js';

export const companyFinancialsShape: CompanyQueryShape = { holders: [], officers: false, branches: false, years: 0, metrics: false };

export function assembleCompanyFinancials(row: CompanyRow): CompanyFinancialsData {
  return {
    id: String(row.id),
    isConsolidated: row.is_consolidated,
    latestFiledYear: row.latest_filed_year,
    identity: part.identity(row),
    latest: part.latest(row),
  };
}
