import { z } from 'zod';

// The spec's resource tables, field for field. Every field is present in responses: nullable
// ones as null, lists as []. Objects are strict so an undocumented field is a test failure.

export const fiscalCodePattern = /^(?:\d{11}|[A-Za-z0-9]{16})$/;
// Every value written with it is a whole date, so it is `format: date` too (generated clients
// type it as a date); the pattern stays, as JSON Schema validators need not check formats.
export const isoDate = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected YYYY-MM-DD').meta({ format: 'date' });

// Bounds the stored data has: the import refuses a line past them (company-dossier.ts,
// docs/import-format.md) and the response schemas state them, so the OpenAPI document gives a
// generated client each field's true range instead of zod's ±2^53 for any integer.
/** Years a company is founded or dissolved in (a dissolution takes the founding year's range). */
export const COMPANY_YEARS = { min: 1800, max: 2100 } as const;
/** Fiscal years of a company's statements, filed or forecast. */
export const FISCAL_YEARS = { min: 1900, max: 2100 } as const;
/**
 * A count (employees, state aids): what Postgres's `integer` holds, where a year's employees and
 * the latest employees are stored. The headcount and the aids, kept in jsonb, are held to it too,
 * so that a count the store takes in one place it takes in every other.
 */
export const MAX_COUNT = 2_147_483_647;
export const yearSchema = (years: { min: number; max: number }) => z.number().int().min(years.min).max(years.max);
export const countSchema = () => z.number().int().min(0).max(MAX_COUNT);

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

// The response schemas' closed lists, one schema each: every field holding one refers to it, so
// the OpenAPI document lists the values once, as a component a generated client can import.
export const companySizeSchema = z.enum(sizeValues).describe('Company size under the EU SME definition (Recommendation 2003/361/EC).');
export const legalFormSchema = z.enum(legalFormValues).describe('Italian legal form, as commonly abbreviated.');
export const naceSectionSchema = z.enum(naceSectionValues).describe('NACE Rev. 2 section, a letter from A to U.');
export const roleCategorySchema = z.enum(roleCategoryValues).describe('Category of an officer\'s role.');
export const metricCategorySchema = z.enum(metricCategoryValues).describe('A category of line items.');

// Each field and each object says what it means (`.describe()`): the OpenAPI document and the
// MCP tools' output schemas are generated from these schemas and carry the text. The Italian
// document translates every sentence (api/openapi/italian-descriptions.ts, keyed by the English
// sentence): change a sentence here and give it its translation there, or a test fails.
// Conventions of decisions.md: dates YYYY-MM-DD, money in euro, shares and changes as
// fractions (0.25 = 25%).

export const addressSchema = z.strictObject({
  line1: z.string().nullable().describe('First address line: street and number.'),
  line2: z.string().nullable().describe('Second address line, when there is one.'),
  locality: z.string().nullable().describe('Town or city (comune).'),
  postalCode: z.string().nullable().describe('Postal code (CAP).'),
  countryCode: z.string().regex(/^[A-Z]{2}$/).describe('Two-letter ISO 3166-1 country code, e.g. IT.'),
}).describe('A postal address. Fields other than countryCode are null when unknown.');

export const companyIdentitySchema = z.strictObject({
  legalName: z.string().nullable().describe('Registered name of the company (ragione sociale).'),
  legalForm: legalFormSchema.nullable()
    .describe('Legal form, as commonly abbreviated: e.g. SRL (società a responsabilità limitata), SPA (società per azioni), SC (cooperativa), DI (ditta individuale).'),
  foundingYear: yearSchema(COMPANY_YEARS).nullable().describe('Year the company was founded.'),
  incorporationDate: isoDate.nullable().describe('Date of incorporation, YYYY-MM-DD.'),
  isQuoted: z.boolean().nullable().describe('Whether the company is listed on a stock exchange.'),
  vatNumber: z.string().nullable().describe('Italian VAT number (partita IVA), 11 digits.'),
  fiscalCode: z.string().nullable().describe('Italian fiscal code (codice fiscale): 11 digits, or 16 characters for a person such as a sole proprietor.'),
  naceCode: z.string().nullable().describe('NACE Rev. 2 activity code, e.g. 62.01; its first two digits are the NACE division.'),
  naceSection: naceSectionSchema.nullable().describe('NACE Rev. 2 section, a letter from A to U.'),
  address: addressSchema.nullable().describe('Address of the registered office.'),
}).describe('Descriptive, non-financial data identifying the company. Each field is null when unknown.');

export const registrySchema = z.strictObject({
  pec: z.string().nullable().describe('Certified e-mail address (PEC, posta elettronica certificata).'),
  cciaa: z.string().nullable().describe('Chamber of Commerce (CCIAA) registration.'),
  rea: z.string().nullable().describe('REA number (Repertorio Economico Amministrativo) in the Chamber of Commerce register.'),
}).describe('Registration data from the Chamber of Commerce. Each field is null when unknown.');

export const headcountSchema = z.strictObject({
  employees: countSchema().describe('Employee count.'),
  asOf: isoDate.describe('Date the count refers to, YYYY-MM-DD.'),
}).describe('Number of employees at a date.');

export const riskIndicatorsSchema = z.strictObject({
  protestsOfBill: z.boolean().nullable().describe('Whether protested bills or cheques (protesti) are on record against the company.'),
  insolvencyProceedings: z.boolean().nullable().describe('Whether insolvency proceedings concern the company.'),
  insolvencyApplications: z.boolean().nullable().describe('Whether applications to open insolvency proceedings have been filed against the company.'),
  assetEncumbrances: z.boolean().nullable().describe('Whether encumbrances, such as mortgages or seizures, are registered on the company\'s assets.'),
  officersWithRiskIndicators: z.boolean().nullable().describe('Whether any officer of the company carries risk indicators.'),
}).describe('Risk flags: each is true, false, or null when unknown.');

export const stateAidsSchema = z.strictObject({
  count: countSchema().nullable().describe('Number of state aids received.'),
  countLast36Months: countSchema().nullable().describe('Number of state aids received in the last 36 months.'),
  amount: z.number().min(0).nullable().describe('Total amount of the state aids received, in euro.'),
  amountLast36Months: z.number().min(0).nullable().describe('Total amount of the state aids received in the last 36 months, in euro.'),
}).describe('State aids (aiuti di Stato) granted to the company. Each field is null when unknown.');

export const holderSchema = z.strictObject({
  name: z.string().nullable().describe('Name of the person or entity; no other personal identifiers are given.'),
  share: z.number().min(0).max(1).nullable()
    .describe('Ownership fraction from 0 to 1 (0.25 = 25%): of the company held by a shareholder or owner, or of a subsidiary held by the company.'),
}).describe('A shareholder, beneficial owner or subsidiary: its name and the ownership fraction. Each field is null when unknown.');

export const officerSchema = z.strictObject({
  name: z.string().nullable().describe('Name of the officer; null when unknown.'),
  role: z.string().nullable().describe('Role as registered, in Italian (e.g. Amministratore unico); null when unknown.'),
  roleCategory: roleCategorySchema.describe('Category of the role, from a closed list.'),
}).describe('A person or entity holding an office in the company.');

export const companyBranchSchema = z.strictObject({
  legalName: z.string().describe('Name of the branch.'),
  address: addressSchema.nullable().describe('Address of the branch; null when unknown.'),
}).describe('A secondary office (sede secondaria) of the company.');

export const annualSnapshotSchema = z.strictObject({
  year: yearSchema(FISCAL_YEARS).describe('Fiscal year.'),
  isForecasted: z.boolean().describe('Whether the figures are a forecast rather than filed.'),
  size: companySizeSchema.nullable()
    .describe('Company size that year under the EU SME definition (Recommendation 2003/361/EC); null when unknown.'),
  statementDate: isoDate.nullable().describe('Closing date of the financial statement, YYYY-MM-DD; null when unknown.'),
  employees: countSchema().nullable().describe('Employee count that year; null when unknown.'),
  employeesYoY: z.number().nullable()
    .describe('Change in the employee count from the year before, as a fraction (0.1 = +10%); null when it cannot be computed.'),
}).describe('Headline figures of one fiscal year.');

export const financialMetricSchema = z.strictObject({
  slug: z.string().describe('Stable identifier of the line item or metric, in lower snake_case (e.g. revenue, total_assets).'),
  name: z.string().describe('Display name of the line item or metric.'),
  categories: z.array(metricCategorySchema).describe('Categories the item belongs to, from a closed list.'),
  unit: z.string().nullable()
    .describe('Unit of the values: EUR for amounts in euro, ratio for fractions (0.12 = 12%), days for durations; null when none is given.'),
  value: z.number().describe('Value that year, in the unit given.'),
  previousValue: z.number().nullable().describe('Value the year before; null when not on file, or when this year is filed and the year before is a forecast (a filed figure is never compared with a forecast).'),
  yoyChange: z.number().nullable().describe('Relative change from the year before, (value - previousValue) / |previousValue|, as a fraction (0.05 = +5%); for a ratio, not the change in points (0.33 to 0.317 is -0.0394); null when it cannot be computed.'),
  marketValue: z.number().nullable().describe('Market reference value of the item, as supplied with the company data; null when none.'),
  score: z.number().nullable().describe('Score of the item, as supplied with the company data; null when none.'),
}).describe('One reported line item or derived metric of a fiscal year.');

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
