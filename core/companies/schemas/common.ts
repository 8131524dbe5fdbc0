import { z } from 'zod';

// The spec's resource tables, field for field. Every field is present in responses: nullable
// ones as null, lists as []. Objects are strict so an undocumented field is a test failure.

export const fiscalCodePattern = /^(?:\d{11}|[A-Za-z0-9]{16})$/;
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD');

export const sizeValues = ['micro', 'small', 'medium', 'large'] as const;
export const legalFormValues = ['SRL', 'SRLS', 'SPA', 'SAPA', 'SNC', 'SAS', 'SS', 'SC', 'DI', 'CONSORZIO', 'FONDAZIONE', 'ASSOCIAZIONE', 'ALTRO'] as const;
export const naceSectionValues = ['A', 'B', 'C', 'D', 'E', 'F', 'G', 'H', 'I', 'J', 'K', 'L', 'M', 'N', 'O', 'P', 'Q', 'R', 'S', 'T', 'U'] as const;
export const roleCategoryValues = ['legal_representative', 'director', 'board_member', 'statutory_auditor', 'auditor', 'manager', 'proxy', 'liquidator', 'other'] as const;
export const metricCategoryValues = ['balance_sheet', 'income_statement', 'assets', 'liabilities', 'equity', 'revenue', 'costs', 'profitability', 'liquidity', 'solvency', 'efficiency', 'ratio'] as const;
// decisions.md's closed lists. The import refuses anything else and the columns hold to them
// (migration 019), so rows read back are typed with them.
export type CompanySize = (typeof sizeValues)[number];
export type LegalForm = (typeof legalFormValues)[number];
export type NaceSection = (typeof naceSectionValues)[number];
export type RoleCategory = (typeof roleCategoryValues)[number];
export type MetricCategory = (typeof metricCategoryValues)[number];

export const addressSchema = z.strictObject({
  line1: z.string().nullable(),
  line2: z.string().nullable(),
  locality: z.string().nullable(),
  postalCode: z.string().nullable(),
  countryCode: z.string().regex(/^[A-Z]{2}$/),
});

export const companyIdentitySchema = z.strictObject({
  legalName: z.string().nullable(),
  legalForm: z.enum(legalFormValues).nullable(),
  foundingYear: z.number().int().nullable(),
  incorporationDate: isoDate.nullable(),
  isQuoted: z.boolean().nullable(),
  vatNumber: z.string().nullable(),
  fiscalCode: z.string().nullable(),
  naceCode: z.string().nullable(),
  naceSection: z.enum(naceSectionValues).nullable(),
  address: addressSchema.nullable(),
});

export const registrySchema = z.strictObject({
  pec: z.string().nullable(),
  cciaa: z.string().nullable(),
  rea: z.string().nullable(),
});

export const headcountSchema = z.strictObject({
  employees: z.number().int(),
  asOf: isoDate,
});

export const riskIndicatorsSchema = z.strictObject({
  protestsOfBill: z.boolean().nullable(),
  insolvencyProceedings: z.boolean().nullable(),
  insolvencyApplications: z.boolean().nullable(),
  assetEncumbrances: z.boolean().nullable(),
  officersWithRiskIndicators: z.boolean().nullable(),
});

export const stateAidsSchema = z.strictObject({
  count: z.number().int().nullable(),
  countLast36Months: z.number().int().nullable(),
  amount: z.number().nullable(),
  amountLast36Months: z.number().nullable(),
});

export const holderSchema = z.strictObject({
  name: z.string().nullable(),
  share: z.number().min(0).max(1).nullable(),
});

export const officerSchema = z.strictObject({
  name: z.string().nullable(),
  role: z.string().nullable(),
  roleCategory: z.enum(roleCategoryValues),
});

export const companyBranchSchema = z.strictObject({
  legalName: z.string(),
  address: addressSchema.nullable(),
});

export const annualSnapshotSchema = z.strictObject({
  year: z.number().int(),
  isForecasted: z.boolean(),
  size: z.enum(sizeValues).nullable(),
  statementDate: isoDate.nullable(),
  employees: z.number().int().nullable(),
  employeesYoY: z.number().nullable(),
});

export const financialMetricSchema = z.strictObject({
  slug: z.string(),
  name: z.string(),
  categories: z.array(z.enum(metricCategoryValues)),
  unit: z.string().nullable(),
  value: z.number(),
  previousValue: z.number().nullable(),
  yoyChange: z.number().nullable(),
  marketValue: z.number().nullable(),
  score: z.number().nullable(),
});

export type Address = z.infer<typeof addressSchema>;
export type CompanyIdentity = z.infer<typeof companyIdentitySchema>;
export type Registry = z.infer<typeof registrySchema>;
export type Headcount = z.infer<typeof headcountSchema>;
export type RiskIndicators = z.infer<typeof riskIndicatorsSchema>;
export type StateAids = z.infer<typeof stateAidsSchema>;
export type Holder = z.infer<typeof holderSchema>;
export type Officer = z.infer<typeof officerSchema>;
export type CompanyBranch = z.infer<typeof companyBranchSchema>;
export type AnnualSnapshot = z.infer<typeof annualSnapshotSchema>;
export type FinancialMetric = z.infer<typeof financialMetricSchema>;
