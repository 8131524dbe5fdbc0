import { z } from 'zod';
import {
  annualSnapshotSchema, companyBranchSchema, companyIdentitySchema, financialMetricSchema, headcountSchema,
  holderSchema, officerSchema, registrySchema, riskIndicatorsSchema, stateAidsSchema,
} from './common.js';

// The `data` of each of the four endpoints, exactly as the spec's tables list them.

export const reportIdentitySchema = companyIdentitySchema.extend({
  activityStartDate: z.string().nullable(),
  dissolutionYear: z.number().int().nullable(),
  foreignOwned: z.boolean().nullable(),
  controllingEntity: z.string().nullable(),
});

export const creditReportIdentitySchema = companyIdentitySchema.extend({
  foreignOwned: z.boolean().nullable(),
  controllingEntity: z.string().nullable(),
});

export const companyReportDataSchema = z.strictObject({
  isConsolidated: z.boolean(),
  latestFiledYear: z.number().int().nullable(),
  identity: reportIdentitySchema,
  registry: registrySchema.nullable(),
  headcount: headcountSchema.nullable(),
  risk: riskIndicatorsSchema,
  stateAids: stateAidsSchema.nullable(),
  ownership: z.strictObject({
    shareholders: z.array(holderSchema),
    beneficialOwners: z.array(holderSchema),
    subsidiaries: z.array(holderSchema),
  }),
  officers: z.array(officerSchema),
  branches: z.array(companyBranchSchema),
  latest: annualSnapshotSchema.nullable(),
  financials: z.array(annualSnapshotSchema.extend({ metrics: z.array(financialMetricSchema) })).max(10),
});

export const creditReportDataSchema = z.strictObject({
  id: z.string(),
  isConsolidated: z.boolean(),
  latestFiledYear: z.number().int().nullable(),
  identity: creditReportIdentitySchema,
  registry: registrySchema.nullable(),
  headcount: headcountSchema.nullable(),
  risk: riskIndicatorsSchema,
  stateAids: stateAidsSchema.nullable(),
  ownership: z.array(holderSchema),
  officers: z.array(officerSchema),
  latest: annualSnapshotSchema.nullable(),
  financials: z.array(annualSnapshotSchema).max(5),
});

export const peerSchema = z.strictObject({
  id: z.string(),
  identity: companyIdentitySchema,
  latest: annualSnapshotSchema.nullable(),
});

export const profileRiskSchema = riskIndicatorsSchema.extend({
  stateAids: z.strictObject({ count: z.number().int().nullable(), amount: z.number().nullable() }).nullable(),
  history: z.array(annualSnapshotSchema).max(5),
});

const profileBase = {
  id: z.string(),
  identity: companyIdentitySchema,
  latest: annualSnapshotSchema.nullable(),
};

// Exactly one branch: large companies get peers, the others a risk summary (decisions.md:
// EU SME definition).
export const companyProfileLargeSchema = z.strictObject({
  ...profileBase,
  peerCount: z.number().int().min(0),
  peers: z.array(peerSchema).max(10),
});
export const companyProfileSmallSchema = z.strictObject({
  ...profileBase,
  risk: profileRiskSchema,
});
export const companyProfileDataSchema = z.union([companyProfileLargeSchema, companyProfileSmallSchema]);

export const companyFinancialsDataSchema = z.strictObject({
  id: z.string(),
  isConsolidated: z.boolean(),
  latestFiledYear: z.number().int().nullable(),
  identity: companyIdentitySchema,
  latest: annualSnapshotSchema.nullable(),
});

export type CompanyReportData = z.infer<typeof companyReportDataSchema>;
export type CreditReportData = z.infer<typeof creditReportDataSchema>;
export type CompanyProfileData = z.infer<typeof companyProfileDataSchema>;
export type CompanyFinancialsData = z.infer<typeof companyFinancialsDataSchema>;
export type Peer = z.infer<typeof peerSchema>;
