import { z } from 'zod';
import { registrySchema, stateAidsSchema, type CreditReportData } from './schemas/index.js';

// Registry contacts and the risk picture in brief, for callers of the profile (whose large-
// company branch carries no risk section). Taken from the credit report's data, which the
// company cache holds like the profile's: the profile tool then costs no more database work
// than the profile endpoint.

const riskIndicatorNames = ['protestsOfBill', 'insolvencyProceedings', 'insolvencyApplications', 'assetEncumbrances', 'officersWithRiskIndicators'] as const;

export const companyBriefSchema = z.strictObject({
  registry: registrySchema.nullable().describe('Certified e-mail (PEC), Chamber of Commerce and REA number.'),
  risk: z.strictObject({
    flagged: z.array(z.enum(riskIndicatorNames)).describe('Risk indicators that are set (true).'),
    unknown: z.array(z.enum(riskIndicatorNames)).describe('Risk indicators the service has no information on (null).'),
    stateAids: stateAidsSchema.nullable(),
  }),
});

export type CompanyBrief = z.infer<typeof companyBriefSchema>;

export function companyBrief(credit: CreditReportData): CompanyBrief {
  return {
    registry: credit.registry,
    risk: {
      flagged: riskIndicatorNames.filter((n) => credit.risk[n] === true),
      unknown: riskIndicatorNames.filter((n) => credit.risk[n] === null),
      stateAids: credit.stateAids,
    },
  };
}
