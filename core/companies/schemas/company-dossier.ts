import { z } from 'zod';
import {
  addressSchema, headcountSchema, isoDate, legalFormValues, metricCategoryValues, naceSectionValues,
  registrySchema, riskIndicatorsSchema, roleCategoryValues, sizeValues, stateAidsSchema,
} from './common.js';

// The canonical import format: one CompanyDossier per line of a JSON Lines file. The sample
// generator writes it, `cli import` reads it, and docs/import-format.md documents it. Optional
// fields may be omitted (stored as null / []); enumerations are closed so bad data is rejected
// at the door with the line number instead of leaking into API responses.

const upper = (s: string) => s.trim().toUpperCase();

export const dossierFiscalCodeSchema = z
  .string()
  .transform(upper)
  .pipe(z.string().regex(/^(?:\d{11}|[A-Z0-9]{16})$/, 'must be 11 digits (partita IVA / codice fiscale numerico) or a 16-character codice fiscale'));

export const dossierHolderSchema = z.strictObject({
  name: z.string().min(1).nullable(),
  share: z.number().min(0).max(1).nullable().default(null),
  /** The holder's (or subsidiary's) own fiscal code, when it is a company: links ownership chains. */
  fiscalCode: dossierFiscalCodeSchema.nullable().default(null),
});

export const dossierOfficerSchema = z.strictObject({
  name: z.string().min(1).nullable(),
  role: z.string().nullable().default(null),
  roleCategory: z.enum(roleCategoryValues),
});

export const dossierBranchSchema = z.strictObject({
  legalName: z.string().min(1),
  address: addressSchema.nullable().default(null),
});

export const dossierMetricSchema = z.strictObject({
  slug: z.string().regex(/^[a-z0-9_]+$/, 'lower snake_case'),
  /** Display name; defaults to the metric catalogue's name for known slugs. */
  name: z.string().min(1).optional(),
  categories: z.array(z.enum(metricCategoryValues)).optional(),
  unit: z.string().nullable().optional(),
  value: z.number().finite(),
  /** Derived from the previous year's value by the importer when omitted. */
  previousValue: z.number().finite().nullable().optional(),
  yoyChange: z.number().finite().nullable().optional(),
  marketValue: z.number().finite().nullable().default(null),
  score: z.number().finite().nullable().default(null),
});

export const dossierYearSchema = z.strictObject({
  year: z.number().int().min(1900).max(2100),
  isForecasted: z.boolean().default(false),
  size: z.enum(sizeValues).nullable().default(null),
  statementDate: isoDate.nullable().default(null),
  employees: z.number().int().min(0).nullable().default(null),
  /** Derived from the previous year's employees when omitted. */
  employeesYoY: z.number().finite().nullable().optional(),
  metrics: z.array(dossierMetricSchema).default([]),
});

export const companyDossierSchema = z.strictObject({
  fiscalCode: dossierFiscalCodeSchema,
  vatNumber: z
    .string()
    .transform((s) => upper(s).replace(/^IT/, ''))
    .pipe(z.string().regex(/^\d{11}$/, 'must be 11 digits'))
    .nullable()
    .default(null),
  legalName: z.string().min(1).nullable(),
  legalForm: z.enum(legalFormValues).nullable().default(null),
  foundingYear: z.number().int().min(1800).max(2100).nullable().default(null),
  incorporationDate: isoDate.nullable().default(null),
  isQuoted: z.boolean().nullable().default(null),
  naceCode: z.string().regex(/^\d{2}(?:\.\d{1,2})?$/, 'like 62.01').nullable().default(null),
  naceSection: z.enum(naceSectionValues).nullable().default(null),
  /** The full ATECO 2007 code (e.g. 62.01.00), finer than NACE. */
  atecoCode: z.string().nullable().default(null),
  address: addressSchema.nullable().default(null),
  /** Province code (sigla, e.g. MI) and municipality name, for search filters. */
  province: z.string().regex(/^[A-Z]{2}$/).nullable().default(null),
  municipality: z.string().nullable().default(null),
  activityStartDate: isoDate.nullable().default(null),
  dissolutionYear: z.number().int().nullable().default(null),
  foreignOwned: z.boolean().nullable().default(null),
  controllingEntity: z.string().nullable().default(null),
  isConsolidated: z.boolean().default(false),
  registry: registrySchema.nullable().default(null),
  headcount: headcountSchema.nullable().default(null),
  risk: riskIndicatorsSchema.default({
    protestsOfBill: null, insolvencyProceedings: null, insolvencyApplications: null, assetEncumbrances: null, officersWithRiskIndicators: null,
  }),
  stateAids: stateAidsSchema.nullable().default(null),
  shareholders: z.array(dossierHolderSchema).default([]),
  beneficialOwners: z.array(dossierHolderSchema).default([]),
  subsidiaries: z.array(dossierHolderSchema).default([]),
  officers: z.array(dossierOfficerSchema).default([]),
  branches: z.array(dossierBranchSchema).default([]),
  /** Any order; years must be unique. */
  years: z.array(dossierYearSchema).default([]).refine((ys) => new Set(ys.map((y) => y.year)).size === ys.length, 'years must be unique'),
  /** Provenance label, e.g. "synthetic-sample" for generated data. */
  source: z.string().min(1).default('import'),
});

export type CompanyDossierInput = z.input<typeof companyDossierSchema>;
export type CompanyDossier = z.output<typeof companyDossierSchema>;
export type DossierYear = CompanyDossier['years'][number];
export type DossierMetric = DossierYear['metrics'][number];
