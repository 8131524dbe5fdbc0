import { z } from 'zod';
import { lookupKeys } from './company-store.js';
import { runStoreQuery } from './run-store-query.js';
import { registrySchema, stateAidsSchema, type Registry, type StateAids } from './schemas/index.js';
import type { CompanyQueryDeps } from './search-companies.js';

// Registry contacts and the risk picture in brief, for callers of the profile (whose large-
// company branch carries no risk section). One indexed single-row read.

const riskIndicatorNames = ['protestsOfBill', 'insolvencyProceedings', 'insolvencyApplications', 'assetEncumbrances', 'officersWithRiskIndicators'] as const;

export const companyBriefSchema = z.strictObject({
  registry: registrySchema.nullable().describe('Certified e-mail (PEC), Chamber of Commerce and REA number.'),
  risk: z.strictObject({
    flagged: z.array(z.enum(riskIndicatorNames)).describe('Risk indicators that are set (true).'),
    unknown: z.array(z.enum(riskIndicatorNames)).describe('Risk indicators the service has no information on (null).'),
    dissolutionYear: z.number().int().nullable(),
    stateAids: stateAidsSchema.nullable(),
  }),
});

export type CompanyBrief = z.infer<typeof companyBriefSchema>;

interface Row {
  registry: Registry | null;
  state_aids: StateAids | null;
  dissolution_year: number | null;
  risk_protests_of_bill: boolean | null;
  risk_insolvency_proceedings: boolean | null;
  risk_insolvency_applications: boolean | null;
  risk_asset_encumbrances: boolean | null;
  risk_officers_with_risk_indicators: boolean | null;
}

const SQL = `
SELECT registry, state_aids, dissolution_year, risk_protests_of_bill, risk_insolvency_proceedings, risk_insolvency_applications,
       risk_asset_encumbrances, risk_officers_with_risk_indicators
FROM companies WHERE fiscal_code = ? OR vat_number = ? ORDER BY fiscal_code = ? DESC LIMIT 1`;

/** null when no company has this tax ID; looked up exactly as the profile looks it up. */
export async function companyBrief(deps: CompanyQueryDeps, taxId: string): Promise<CompanyBrief | null> {
  const { code, vatNumber } = lookupKeys(taxId);
  if (code.length === 0) return null;
  const result = await runStoreQuery(deps, 'company brief', deps.db.raw<{ rows: Row[] }>(SQL, [code, vatNumber, code]));
  const row = result.rows[0];
  if (!row) return null;
  const indicators: Record<(typeof riskIndicatorNames)[number], boolean | null> = {
    protestsOfBill: row.risk_protests_of_bill,
    insolvencyProceedings: row.risk_insolvency_proceedings,
    insolvencyApplications: row.risk_insolvency_applications,
    assetEncumbrances: row.risk_asset_encumbrances,
    officersWithRiskIndicators: row.risk_officers_with_risk_indicators,
  };
  const s = row.state_aids;
  return {
    registry: row.registry === null ? null : { pec: row.registry.pec ?? null, cciaa: row.registry.cciaa ?? null, rea: row.registry.rea ?? null },
    risk: {
      flagged: riskIndicatorNames.filter((n) => indicators[n] === true),
      unknown: riskIndicatorNames.filter((n) => indicators[n] === null),
      dissolutionYear: row.dissolution_year,
      stateAids: s === null ? null : { count: s.count ?? null, countLast36Months: s.countLast36Months ?? null, amount: s.amount ?? null, amountLast36Months: s.amountLast36Months ?? null },
    },
  };
}
