import { z } from 'zod';
import {
  addressSchema, COMPANY_YEARS, countSchema, FISCAL_YEARS, headcountSchema, legalFormValues, metricCategoryValues, naceSectionValues,
  registrySchema, riskIndicatorsSchema, roleCategoryValues, sizeValues, stateAidsSchema, yearSchema,
} from './common.js';
import { leastCompanySize, type CompanySize } from '../company-size.js';
import { sizeFiguresOf } from '../derive-year-figures.js';
import { holderKindValues, inferHolderKind } from '../infer-holder-kind.js';
import { metricDefinitionsBySlug } from '../metric-catalogue.js';

// The canonical import format: one CompanyDossier per line of a JSON Lines file. The sample
// generator writes it, `cli import` reads it, and docs/import-format.md documents it. Optional
// fields may be omitted (stored as null / []); enumerations are closed so bad data is rejected
// at the door with the line number instead of leaking into API responses.

const upper = (s: string) => s.trim().toUpperCase();

// Bounds the store holds to (a list's positions are smallint; money is bigint, and a double past
// 2^53 is no longer exact) and that no real company comes near: past them a line is refused with
// the field named, not by the database with a type's name. Those of years and counts are in
// common.ts, as the response schemas state them too.
/** Entries of each list of a company (shareholders, officers, branches …). */
export const MAX_LIST_ENTRIES = 10_000;
/** Magnitude of a line item's figures: 10^15 euro is a thousand times the largest balance sheet. */
export const MAX_METRIC_MAGNITUDE = 1e15;
/** Characters of a name (a company's, a person's, a branch's). */
export const MAX_NAME_LENGTH = 500;
export const MAX_MUNICIPALITY_LENGTH = 100;
const name = () => z.string().min(1).max(MAX_NAME_LENGTH);
const list = <T extends z.ZodType>(item: T) => z.array(item).max(MAX_LIST_ENTRIES);
const figure = () => z.number().finite().min(-MAX_METRIC_MAGNITUDE).max(MAX_METRIC_MAGNITUDE);

// An address as the import takes it: countryCode required, each other line null when left out
// (the response's address has every key, as null when unknown).
const dossierAddressSchema = addressSchema.extend({
  line1: addressSchema.shape.line1.default(null),
  line2: addressSchema.shape.line2.default(null),
  locality: addressSchema.shape.locality.default(null),
  postalCode: addressSchema.shape.postalCode.default(null),
});

export const dossierFiscalCodeSchema = z
  .string()
  .transform(upper)
  .pipe(z.string().regex(/^(?:\d{11}|[A-Z0-9]{16})$/, 'must be 11 digits (partita IVA / codice fiscale numerico) or a 16-character codice fiscale'));

/**
 * A holder's (or subsidiary's) code: an Italian one as a company's own (an `IT` VAT prefix
 * dropped), which links ownership chains, or a foreign entity's identifier (a VAT number such as
 * DE811907980, a registry number), kept as given without its spaces, dots and dashes, and
 * never linked: the parents of Italian companies are often abroad.
 */
export const holderFiscalCodeSchema = z
  .string()
  .transform((code) => upper(code).replace(/[\s.\-/]/g, ''))
  .transform((code) => (/^IT\d{11}$/.test(code) ? code.slice(2) : code))
  .pipe(z.string().regex(/^[A-Z0-9]{4,30}$/, "must be an Italian fiscal code (11 digits or 16 characters) or a foreign entity's identifier (4 to 30 letters and digits, e.g. DE811907980)"));

// A name is left out like any other field (docs/import-format.md): stored as null, unknown.
const holderFields = {
  name: name().nullable().default(null),
  share: z.number().min(0).max(1).nullable().default(null),
  /** The holder's (or subsidiary's) own code, when it is an entity: an Italian one links ownership chains. */
  fiscalCode: holderFiscalCodeSchema.nullable().default(null),
};

// A shareholder or beneficial owner is a person or a company (any entity that is not a natural
// person). The people search lists only persons, so a line that does not say gets the kind its
// fiscal code and name point at, and every stored holder has one.
export const dossierHolderSchema = z.strictObject({ ...holderFields, kind: z.enum(holderKindValues).optional() })
  .transform((holder) => ({ ...holder, kind: holder.kind ?? inferHolderKind(holder) }));

/** A subsidiary is a company: `kind` may say so, and nothing else. */
export const dossierSubsidiarySchema = z.strictObject({ ...holderFields, kind: z.literal('company').default('company') });

export const dossierOfficerSchema = z.strictObject({
  name: name().nullable().default(null),
  role: z.string().max(MAX_NAME_LENGTH).nullable().default(null),
  roleCategory: z.enum(roleCategoryValues),
});

export const dossierBranchSchema = z.strictObject({
  legalName: name(),
  address: dossierAddressSchema.nullable().default(null),
});

const metricSlugPattern = /^[a-z0-9_]+$/;

export const dossierMetricSchema = z.strictObject({
  slug: z.string().regex(metricSlugPattern, 'lower snake_case'),
  /** Display name; defaults to the metric catalogue's name for known slugs. */
  name: name().optional(),
  categories: z.array(z.enum(metricCategoryValues)).optional(),
  unit: z.string().max(50).nullable().optional(),
  value: figure(),
  /** Derived from the previous year's value by the importer when omitted. */
  previousValue: figure().nullable().optional(),
  yoyChange: z.number().finite().nullable().optional(),
  marketValue: figure().nullable().default(null),
  score: z.number().finite().nullable().default(null),
});

const dossierMetricListSchema = z.array(dossierMetricSchema);
type DossierMetricOutput = z.output<typeof dossierMetricSchema>;

/**
 * The line items of a year whose items are all plain `{"slug", "value"}` (what nearly every
 * import line holds), as dossierMetricSchema would give them; null for any other list, which
 * then goes through zod itself. Line items are nine in ten of an import's objects, and
 * zod spent ~300 ns on each (four fifths of all validation time; this takes a tenth of that).
 * It accepts only what the schema accepts and returns what the schema returns (a test holds
 * it to that), so dossierMetricSchema stays the contract and gives every error.
 */
function plainMetricList(value: unknown): DossierMetricOutput[] | null {
  if (!Array.isArray(value)) return null;
  const out: DossierMetricOutput[] = new Array(value.length);
  for (let i = 0; i < value.length; i++) {
    const item: unknown = value[i];
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return null;
    let keys = 0;
    for (const _ in item) keys++;
    const { slug, value: amount } = item as { slug?: unknown; value?: unknown };
    if (keys !== 2 || typeof slug !== 'string' || typeof amount !== 'number' || !(Math.abs(amount) <= MAX_METRIC_MAGNITUDE) || !metricSlugPattern.test(slug)) return null;
    out[i] = { slug, value: amount, marketValue: null, score: null };
  }
  return out;
}

/** z.array(dossierMetricSchema), with plainMetricList as its fast path. */
const dossierMetricsSchema = z.unknown().transform((value, ctx) => {
  const plain = plainMetricList(value);
  if (plain !== null) return plain;
  const result = dossierMetricListSchema.safeParse(value);
  if (result.success) return result.data;
  // Paths are relative to this list; the enclosing year and dossier prefix theirs. (A parsed
  // result's issues no longer carry their input, which a raw issue must name.)
  for (const issue of result.error.issues) ctx.issues.push({ ...issue, input: undefined });
  return z.NEVER;
  // Typed as the array schema (the transform itself takes unknown), so that dossier inputs,
  // e.g. the sample generator's output, stay type-checked.
}) as unknown as typeof dossierMetricListSchema;

// What an import accepts is stricter than what a response promises: a date must exist (the
// response schemas check only the YYYY-MM-DD shape, and "2025-99-99" in a JSON-stored object
// would otherwise be served as is), and amounts of aid are bounded as figures are
// (MAX_METRIC_MAGNITUDE). Counts and their bounds, and aid amounts' being 0 or more, are the
// response schemas' own (common.ts).
// A date that exists, in the years foundingYear allows: year 0000 passes the ISO format, and the
// database refused the whole company for it ("date/time field value out of range"), naming no field.
// Checks of several fields together run on fields that are each valid: a count of -1, already
// refused, is not also "less than the last 36 months'".
const noIssuesYet = (payload: z.core.ParsePayload): boolean => payload.issues.length === 0;
const calendarDate = z.iso.date('expected a date that exists, YYYY-MM-DD')
  .refine((day) => day >= `${COMPANY_YEARS.min}-01-01` && day <= `${COMPANY_YEARS.max}-12-31`, `a date from ${COMPANY_YEARS.min}-01-01 to ${COMPANY_YEARS.max}-12-31`);
const dossierHeadcountSchema = headcountSchema.extend({ asOf: calendarDate });
// The last 36 months are part of the whole: 5 aids of 1 in all, or 90,000 € of 1,000, cannot
// both be true, and the analysis would compute from the impossible part.
const dossierStateAidsSchema = stateAidsSchema.extend({
  amount: stateAidsSchema.shape.amount.unwrap().max(MAX_METRIC_MAGNITUDE).nullable(),
  amountLast36Months: stateAidsSchema.shape.amountLast36Months.unwrap().max(MAX_METRIC_MAGNITUDE).nullable(),
}).superRefine((aids, ctx) => {
  if (aids.count !== null && aids.countLast36Months !== null && aids.countLast36Months > aids.count) {
    ctx.addIssue({ code: 'custom', path: ['countLast36Months'], message: `is ${aids.countLast36Months}, more than count (${aids.count}), of which it is a part` });
  }
  if (aids.amount !== null && aids.amountLast36Months !== null && aids.amountLast36Months > aids.amount) {
    ctx.addIssue({ code: 'custom', path: ['amountLast36Months'], message: `is ${aids.amountLast36Months}, more than amount (${aids.amount}), of which it is a part` });
  }
}, { when: noIssuesYet });

export const dossierYearSchema = z.strictObject({
  year: yearSchema(FISCAL_YEARS),
  isForecasted: z.boolean().default(false),
  size: z.enum(sizeValues).nullable().default(null),
  statementDate: calendarDate.nullable().default(null),
  employees: countSchema().nullable().default(null),
  /** Derived from the previous year's employees when omitted. */
  employeesYoY: z.number().finite().nullable().optional(),
  metrics: dossierMetricsSchema.default([]),
}).superRefine(checkYear);

/** What a year must hold beyond each field's own shape (the year schema's refinement). */
export function checkYear(year: Pick<DossierYear, 'size' | 'employees' | 'metrics'>, ctx: z.core.$RefinementCtx): void {
  // One value per metric and year: two would be read differently by different figures (the
  // latest revenue took the first, the next year's change the last).
  const seen = new Set<string>();
  const repeated = new Set<string>();
  for (const m of year.metrics) (seen.has(m.slug) ? repeated : seen).add(m.slug);
  if (repeated.size > 0) ctx.addIssue({ code: 'custom', path: ['metrics'], message: `each metric at most once a year; repeated: ${[...repeated].join(', ')}` });
  year.metrics.forEach((m, i) => {
    for (const [field, cents] of wholeEurosBroken(m)) ctx.addIssue({ code: 'custom', path: ['metrics', i, field], message: `is money in whole euros, but ${cents} has cents: round it to the euro` });
  });
  const contradiction = sizeContradiction(year);
  if (contradiction) ctx.addIssue({ code: 'custom', path: ['size'], message: contradiction });
}

/**
 * The figures of a catalogue money line item (unit EUR: a balance-sheet or income-statement line)
 * that are not whole euros. The format says whole euros: a revenue of 1000.55 was served as such
 * by the report and as 1001 by the search, which keeps the latest revenue and total assets as
 * integers. A custom slug's figures are kept as given: a dividend per share of 0.35 € is money
 * with cents.
 */
function wholeEurosBroken(m: DossierMetricOutput): Array<['value' | 'previousValue' | 'marketValue', number]> {
  if (metricDefinitionsBySlug.get(m.slug)?.unit !== 'EUR') return [];
  const broken: Array<['value' | 'previousValue' | 'marketValue', number]> = [];
  for (const field of ['value', 'previousValue', 'marketValue'] as const) {
    const amount = m[field];
    if (typeof amount === 'number' && !Number.isInteger(amount)) broken.push([field, amount]);
  }
  return broken;
}

/**
 * A size stated for a year must agree with the year's own figures under the EU SME rule
 * (decisions.md), which the profile's branch follows: a "small" company of 300 employees would
 * otherwise be served the smaller companies' branch. The figures give a lower bound (unknown
 * ones count as zero); with all three known, the size itself. A stated size above the bound
 * with figures missing stands: the source may know what the line leaves out.
 */
function sizeContradiction(year: Pick<DossierYear, 'size' | 'employees' | 'metrics'>): string | undefined {
  if (year.size === null) return undefined;
  const figures = sizeFiguresOf(year);
  const atLeast = leastCompanySize(figures);
  if (atLeast === null) return undefined;
  const complete = figures.employees !== null && figures.revenue !== null && figures.totalAssets !== null;
  const rank = (size: CompanySize) => sizeValues.indexOf(size);
  if (rank(year.size) >= rank(atLeast) && (!complete || year.size === atLeast)) return undefined;
  const stated = Object.entries({ employees: figures.employees, revenue: figures.revenue, total_assets: figures.totalAssets }).filter(([, v]) => v !== null).map(([k, v]) => `${k} ${v}`).join(', ');
  return `is ${year.size}, but the year's figures (${stated}) make the company ${complete || atLeast === 'large' ? atLeast : `at least ${atLeast}`} under the EU SME definition (large: 250+ employees, or revenue above 50M € and total assets above 43M €): correct it, or leave size out and it is derived`;
}

export const companyDossierSchema = z.strictObject({
  fiscalCode: dossierFiscalCodeSchema,
  vatNumber: z
    .string()
    .transform((s) => upper(s).replace(/^IT/, ''))
    .pipe(z.string().regex(/^\d{11}$/, 'must be 11 digits'))
    .nullable()
    .default(null),
  legalName: name().nullable(),
  legalForm: z.enum(legalFormValues).nullable().default(null),
  foundingYear: yearSchema(COMPANY_YEARS).nullable().default(null),
  incorporationDate: calendarDate.nullable().default(null),
  isQuoted: z.boolean().nullable().default(null),
  naceCode: z.string().regex(/^\d{2}(?:\.\d{1,2})?$/, 'like 62.01').nullable().default(null),
  naceSection: z.enum(naceSectionValues).nullable().default(null),
  /** The full ATECO 2007 code (e.g. 62.01.00), finer than NACE. */
  atecoCode: z.string().nullable().default(null),
  address: dossierAddressSchema.nullable().default(null),
  /** Province code (sigla, e.g. MI) and municipality name, for search filters. */
  province: z.string().regex(/^[A-Z]{2}$/).nullable().default(null),
  // Indexed for the search with the company's name: a longer one overflowed the index's row
  // (the longest comune's name is 34 letters).
  municipality: z.string().max(MAX_MUNICIPALITY_LENGTH).nullable().default(null),
  activityStartDate: calendarDate.nullable().default(null),
  dissolutionYear: yearSchema(COMPANY_YEARS).nullable().default(null),
  foreignOwned: z.boolean().nullable().default(null),
  controllingEntity: z.string().nullable().default(null),
  isConsolidated: z.boolean().default(false),
  registry: registrySchema.nullable().default(null),
  headcount: dossierHeadcountSchema.nullable().default(null),
  risk: riskIndicatorsSchema.default({
    protestsOfBill: null, insolvencyProceedings: null, insolvencyApplications: null, assetEncumbrances: null, officersWithRiskIndicators: null,
  }),
  stateAids: dossierStateAidsSchema.nullable().default(null),
  shareholders: list(dossierHolderSchema).default([]),
  beneficialOwners: list(dossierHolderSchema).default([]),
  subsidiaries: list(dossierSubsidiarySchema).default([]),
  officers: list(dossierOfficerSchema).default([]),
  branches: list(dossierBranchSchema).default([]),
  /** Any order; years must be unique. */
  years: z.array(dossierYearSchema).default([]).refine((ys) => new Set(ys.map((y) => y.year)).size === ys.length, 'years must be unique'),
  /** Provenance label, e.g. "synthetic-sample" for generated data. */
  source: z.string().min(1).default('import'),
}).superRefine((company, ctx) => {
  // A company dissolved before it was founded: one of the two years is wrong, and the analysis
  // would flag a dissolution that predates everything else on file.
  if (company.foundingYear !== null && company.dissolutionYear !== null && company.dissolutionYear < company.foundingYear) {
    ctx.addIssue({ code: 'custom', path: ['dissolutionYear'], message: `is ${company.dissolutionYear}, before foundingYear (${company.foundingYear})` });
  }
  // A year's balance sheet closes within that fiscal year, or (a year not matching the calendar)
  // the one after or before: a 2024 statement dated 2019 is another year's.
  company.years.forEach((year, i) => {
    const closing = year.statementDate === null ? null : Number(year.statementDate.slice(0, 4));
    if (closing !== null && Math.abs(closing - year.year) > 1) {
      ctx.addIssue({ code: 'custom', path: ['years', i, 'statementDate'], message: `is ${year.statementDate}, not within a year of the fiscal year ${year.year}` });
    }
  });
}, { when: noIssuesYet });

export type CompanyDossierInput = z.input<typeof companyDossierSchema>;
export type CompanyDossier = z.output<typeof companyDossierSchema>;
export type DossierYear = CompanyDossier['years'][number];
export type DossierMetric = DossierYear['metrics'][number];
