import { z } from 'zod';
import { registrySchema, stateAidsSchema, type CreditReportData } from './schemas/index.js';

// Whether the company is dissolved, its registry contacts and the risk picture in brief, for
// callers of the profile (whose large-company branch carries no risk section, and whose identity
// no dissolution). Registry and risk are taken from the credit report's data, and the dissolution
// year from companyDissolution, both held by the company cache like the profile's.

const riskIndicatorNames = ['protestsOfBill', 'insolvencyProceedings', 'insolvencyApplications', 'assetEncumbrances', 'officersWithRiskIndicators'] as const;

export const companyBriefSchema = z.strictObject({
  // The API profile's identity is the spec's CompanyIdentity, which has no dissolution: an agent
  // checking a company's standing with the profile took a dissolved company for an active one.
  status: z.enum(['active', 'dissolved']).describe('dissolved: a dissolution year is recorded (dissolutionYear), as the search says it.'),
  dissolutionYear: z.number().int().nullable(),
  registry: registrySchema.nullable().describe('Certified e-mail (PEC), Chamber of Commerce and REA number.'),
  risk: z.strictObject({
    flagged: z.array(z.enum(riskIndicatorNames)).describe('Risk indicators that are set (true).'),
    unknown: z.array(z.enum(riskIndicatorNames)).describe('Risk indicators the service has no information on (null).'),
    stateAids: stateAidsSchema.nullable(),
  }),
});

export type CompanyBrief = z.infer<typeof companyBriefSchema>;

export function companyBrief(credit: CreditReportData, dissolutionYear: number | null): CompanyBrief {
  return {
    status: dissolutionYear === null ? 'active' : 'dissolved',
    dissolutionYear,
    registry: credit.registry,
    risk: {
      flagged: riskIndicatorNames.filter((n) => credit.risk[n] === true),
      unknown: riskIndicatorNames.filter((n) => credit.risk[n] === null),
      stateAids: credit.stateAids,
    },
  };
}
