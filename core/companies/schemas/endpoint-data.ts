import { z } from 'zod';
import {
  annualSnapshotSchema, COMPANY_YEARS, companyBranchSchema, companyIdentitySchema, countSchema, FISCAL_YEARS, financialMetricSchema,
  headcountSchema, holderSchema, isoDate, officerSchema, registrySchema, riskIndicatorsSchema, stateAidsSchema, yearSchema,
} from './common.js';

// The `data` of each of the four endpoints, exactly as the spec's tables list them. Fields shared
// by several endpoints are one schema each, so they say the same thing everywhere (see the
// note on descriptions in common.ts).

const companyId = z.string().describe('The service\'s internal identifier of the company.');
const isConsolidated = z.boolean().describe('Whether the figures come from consolidated (group) statements.');
const latestFiledYear = yearSchema(FISCAL_YEARS).nullable().describe('Most recent fiscal year with filed figures; null when none are on file.');
const latest = annualSnapshotSchema.nullable().describe('Headline figures of the most recent filed fiscal year; null when none are on file.');
const foreignOwned = z.boolean().nullable().describe('Whether the company is foreign-owned; null when unknown.');
const controllingEntity = z.string().nullable().describe('Name of the entity controlling the company; null when there is none or it is unknown.');
const registry = registrySchema.nullable().describe('Chamber of Commerce registration data; null when unknown.');
const headcount = headcountSchema.nullable().describe('Latest employee count; null when unknown.');
const risk = riskIndicatorsSchema.describe('Risk indicators.');
const stateAids = stateAidsSchema.nullable().describe('State aids received; null when unknown.');
const officers = z.array(officerSchema).describe('Officers of the company: representatives, directors, auditors and the like.');
const shareholders = z.array(holderSchema).describe('Shareholders of the company, with the fraction each holds.');

export const reportIdentitySchema = companyIdentitySchema.extend({
  activityStartDate: isoDate.nullable().describe('Date the company started trading, YYYY-MM-DD; null when unknown.'),
  dissolutionYear: yearSchema(COMPANY_YEARS).nullable().describe('Year the company was dissolved; null when it was not, or when unknown.'),
  foreignOwned,
  controllingEntity,
}).describe('Identity of the company, with when it started trading, its dissolution, its foreign ownership and its controlling entity.');

export const creditReportIdentitySchema = companyIdentitySchema.extend({
  foreignOwned,
  controllingEntity,
}).describe('Identity of the company, with its foreign ownership and its controlling entity.');

export const companyReportDataSchema = z.strictObject({
  isConsolidated,
  latestFiledYear,
  identity: reportIdentitySchema.describe('Identity of the company.'),
  registry,
  headcount,
  risk,
  stateAids,
  ownership: z.strictObject({
    shareholders,
    beneficialOwners: z.array(holderSchema).describe('Beneficial owners (titolari effettivi) of the company. A share of null is one the register gives none for: as when no natural person holds more than 25% and the law then names the legal representative or managing official, who may hold nothing.'),
    subsidiaries: z.array(holderSchema).describe('Companies this company holds shares in, with the fraction it holds.'),
  }).describe('Who owns the company and what it owns.'),
  officers,
  branches: z.array(companyBranchSchema).describe('Secondary offices of the company.'),
  latest,
  financials: z.array(annualSnapshotSchema.extend({
    metrics: z.array(financialMetricSchema).describe('Every line item and metric reported for that year.'),
  }).describe('Headline figures of one fiscal year, with its line items.'))
    .max(10).describe('Up to 10 fiscal years, newest first, each with every reported line item.'),
}).describe('The company report: everything in the credit report plus multi-year statements with every line item, branches, beneficial owners and subsidiaries.');

export const creditReportDataSchema = z.strictObject({
  id: companyId,
  isConsolidated,
  latestFiledYear,
  identity: creditReportIdentitySchema.describe('Identity of the company.'),
  registry,
  headcount,
  risk,
  stateAids,
  ownership: shareholders,
  officers,
  latest,
  financials: z.array(annualSnapshotSchema).max(5).describe('Up to 5 recent fiscal years of headline figures, newest first, without line items.'),
}).describe('The credit report: identity, registry data, headcount, risk indicators, state aids, shareholders, officers and recent headline figures.');

const identity = companyIdentitySchema.describe('Identity of the company.');

export const peerSchema = z.strictObject({
  id: companyId,
  identity,
  latest,
}).describe('A comparable company: same NACE division, nearest in size.');

export const stateAidsSummarySchema = stateAidsSchema.pick({ count: true, amount: true })
  .describe('Number and total amount (in euro) of the state aids received. Each field is null when unknown.');

export const profileRiskSchema = riskIndicatorsSchema.extend({
  stateAids: stateAidsSummarySchema.nullable()
    .describe('Number and total amount (in euro) of the state aids received; null when unknown.'),
  history: z.array(annualSnapshotSchema).max(5).describe('Up to 5 recent fiscal years of headline figures, newest first.'),
}).describe('Risk flags (each true, false, or null when unknown), state aids and recent history.');

const profileBase = {
  id: companyId,
  identity,
  latest,
};

// Exactly one branch: large companies get peers, the others a risk summary (decisions.md:
// EU SME definition). Both are strict and each requires a field the other may not have, so no
// value matches both: z.xor (JSON Schema oneOf) says so to generated clients.
export const companyProfileLargeSchema = z.strictObject({
  ...profileBase,
  // A count(*) the store casts to integer.
  peerCount: countSchema()
    .describe('Number of other companies in the same NACE division, of any size; peers lists at most 10 of them, so this can be larger than the length of peers.'),
  peers: z.array(peerSchema).max(10).describe('Up to 10 companies of the same NACE division nearest in size: by latest revenue, or by headcount when the company has no revenue on file.'),
}).describe('Profile of a large company (EU SME definition: 250 or more employees, or turnover above EUR 50 million and balance-sheet total above EUR 43 million): its peers.');
export const companyProfileSmallSchema = z.strictObject({
  ...profileBase,
  risk: profileRiskSchema.describe('Risk summary of the company: its risk flags, state aids and recent years.'),
}).describe('Profile of a micro, small or medium company: its risk summary.');
export const companyProfileDataSchema = z.xor([companyProfileLargeSchema, companyProfileSmallSchema])
  .describe('The company profile: identity and latest figures, then exactly one branch by size: peerCount and peers for a large company, risk for the others.');

export const companyFinancialsDataSchema = z.strictObject({
  id: companyId,
  isConsolidated,
  latestFiledYear,
  identity,
  latest,
}).describe('The company financials: identity, whether figures are consolidated, the latest filed year and its headline figures.');

export type CompanyReportData = z.infer<typeof companyReportDataSchema>;
export type CreditReportData = z.infer<typeof creditReportDataSchema>;
export type CompanyProfileData = z.infer<typeof companyProfileDataSchema>;
export type CompanyFinancialsData = z.infer<typeof companyFinancialsDataSchema>;
export type Peer = z.infer<typeof peerSchema>;
