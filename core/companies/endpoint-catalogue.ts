import { z } from 'zod';
import { findProduct, type EndpointSlug } from '../billing/products.js';
import { requestIdSchema, type ErrorDetail } from '../errors/index.js';
import { fiscalCodeRefusal, notFoundHint } from './identifier-hints.js';
import {
  companyFinancialsDataSchema, companyProfileDataSchema, companyReportDataSchema, creditReportDataSchema, fiscalCodePattern,
  type CompanyFinancialsData, type CompanyProfileData, type CompanyReportData, type CreditReportData,
} from './schemas/index.js';

// The four API endpoints, once: the HTTP routes, the per-key OpenAPI document and the /docs
// page are all generated from this list, so a path, a parameter rule, a default price or a
// sentence of documentation cannot drift between them. Texts exist in English and Italian and
// must say the same thing (spec: "Both versions describe the same behaviour").

export type Language = 'en' | 'it';
export const languages: readonly Language[] = ['en', 'it'];

export const usageSchema = z.strictObject({
  quantity: z.number().int().nonnegative(),
  unit: z.enum(['credits', 'calls']),
});

export const metaSchema = z.strictObject({
  requestId: requestIdSchema,
  endpoint: z.string(),
  usage: usageSchema,
});

export const successEnvelopeSchema = <T extends z.ZodType>(data: T) => z.strictObject({ data, meta: metaSchema });

export type Usage = z.infer<typeof usageSchema>;
export type Meta = z.infer<typeof metaSchema>;

// Path parameters as the spec states them. Lookups are case-insensitive: the store upper-cases
// the value (lookupKeys), so the schema (and the OpenAPI pattern) accepts both cases.
// Its refusal names the likely slip (a lost leading zero, an IT prefix) with the code to send.
export const fiscalCodeParamSchema = z.string().regex(fiscalCodePattern, { error: (issue) => fiscalCodeRefusal(issue.input) });
// A tax ID is any non-empty text (the spec: "minimum length 1, any non-empty value accepted"):
// one of spaces only is looked up as it is, and no company has it. Spaces around a real one (a
// pasted value) are dropped before the lookup. Only an empty one is refused: `/companies//profile`,
// a URL built from an empty variable (the route takes it: registerCompanyEndpoints).
export const taxIdParamSchema = z.string().min(1, 'must not be empty').overwrite((id) => id.trim() || id);

/** The read side of the company store the endpoints need; core/companies' store implements it. */
export interface CompanyLookups {
  companyReport(fiscalCode: string): Promise<CompanyReportData | null>;
  creditReport(fiscalCode: string): Promise<CreditReportData | null>;
  companyProfile(taxId: string): Promise<CompanyProfileData | null>;
  companyFinancials(taxId: string): Promise<CompanyFinancialsData | null>;
}

export type CompanyLookupName = keyof CompanyLookups;

export interface EndpointTexts {
  summary: string;
  description: string;
  parameter: string;
}

// A tax ID may be any text (up to what a URL holds, ~16 KB): the message echoes its start.
const ECHOED_TAX_ID = 64;

/**
 * The not_found message, naming what was looked up as the caller will recognise it (upper-cased,
 * as it was looked up). A tax ID is quoted as JSON: it is any text, a NUL or a quote included;
 * a long one is cut short. An identifier that cannot be real (10 digits, a wrong check digit)
 * says so: the caller is to fix it, not to look for the company elsewhere.
 */
export function notFoundMessage(param: 'fiscalCode' | 'taxId', identifier: string): string {
  const hint = notFoundHint(identifier);
  const tail = hint ? `; ${hint}.` : '.';
  if (param === 'fiscalCode') return `No company has the fiscal code ${identifier}${tail}`;
  const shown = identifier.length > ECHOED_TAX_ID ? `${JSON.stringify(identifier.slice(0, ECHOED_TAX_ID))}… (${identifier.length} characters)` : JSON.stringify(identifier);
  return `No company has the tax ID ${shown}${tail}`;
}

/**
 * The invalid_params of a path parameter its schema refused: one detail per failure and a
 * message that says them, so a caller who prints only the message still learns what to send.
 */
export function paramRefusal(param: 'fiscalCode' | 'taxId', issues: readonly { message: string }[]): { message: string; details: ErrorDetail[] } {
  const details = issues.map((issue) => ({ path: `path.${param}`, message: issue.message }));
  return { message: `The path's ${param} ${details.map((d) => d.message).join('; ')}.`, details };
}

export interface EndpointDefinition {
  /** Product slug: meta.endpoint, plan entitlements, usage events. */
  slug: EndpointSlug;
  /** OpenAPI-style template, e.g. /companies/{fiscalCode}/report. */
  path: string;
  param: { name: 'fiscalCode' | 'taxId'; schema: z.ZodString };
  data: z.ZodType;
  /**
   * Name of its `data` in the OpenAPI components (its answer is `<schemaName>Envelope`): the
   * resource's, one stem for all four. Not `<operationId>Data` or `…Response`, the names client
   * generators give an operation's own request and response types.
   */
  schemaName: string;
  /** From the product catalogue (core/billing/products.ts), which the default plan also reads. */
  defaultMeasure: Usage;
  texts: Record<Language, EndpointTexts>;
  /** Which of the store's lookups answers it. */
  lookupName: CompanyLookupName;
}

// What lookupKeys (company-store.ts) does with the value, said to the caller.
const fiscalCodeTexts: Record<Language, string> = {
  en: 'The company\'s fiscal code: an 11-digit code (partita IVA / codice fiscale numerico) or a 16-character codice fiscale. Case-insensitive. Its VAT number finds it too, where the two differ (a sole proprietorship). Send all 11 digits, leading zeros included, and no IT prefix (the profile and financials accept one).',
  it: 'Il codice fiscale dell\'impresa: un codice di 11 cifre (partita IVA / codice fiscale numerico) oppure un codice fiscale di 16 caratteri. Maiuscole e minuscole sono equivalenti. Si può usare anche la sua partita IVA, quando è diversa dal codice fiscale (ditte individuali). Vanno inviate tutte le 11 cifre, zeri iniziali compresi, senza il prefisso IT (il profilo e i dati finanziari lo accettano).',
};
const taxIdTexts: Record<Language, string> = {
  en: 'The company\'s Italian tax ID (any non-empty value): its fiscal code, or its VAT number with or without the IT prefix, leading zeros included. Case-insensitive.',
  it: 'L\'identificativo fiscale italiano dell\'impresa (qualsiasi valore non vuoto): il codice fiscale, oppure la partita IVA con o senza il prefisso IT, zeri iniziali compresi. Maiuscole e minuscole sono equivalenti.',
};

function defaultMeasureOf(slug: EndpointSlug): Usage {
  const product = findProduct(slug);
  if (!product) throw new Error(`${slug} is missing from the product catalogue`);
  return { ...product.defaultMeasure };
}

export const endpointCatalogue: readonly EndpointDefinition[] = [
  {
    slug: 'company-report',
    path: '/companies/{fiscalCode}/report',
    param: { name: 'fiscalCode', schema: fiscalCodeParamSchema },
    data: companyReportDataSchema,
    schemaName: 'CompanyReport',
    defaultMeasure: defaultMeasureOf('company-report'),
    lookupName: 'companyReport',
    texts: {
      en: {
        summary: 'Company report',
        description: 'The most comprehensive report: everything in the credit report plus up to 10 years of statements with every reported line item, branches, beneficial owners and subsidiaries.',
        parameter: fiscalCodeTexts.en,
      },
      it: {
        summary: 'Report aziendale',
        description: 'Il report più completo: tutto il contenuto del report di credito più fino a 10 anni di bilanci con ogni voce riportata, le sedi secondarie, i titolari effettivi e le società controllate.',
        parameter: fiscalCodeTexts.it,
      },
    },
  },
  {
    slug: 'company-credit-report',
    path: '/companies/{fiscalCode}/credit-report',
    param: { name: 'fiscalCode', schema: fiscalCodeParamSchema },
    data: creditReportDataSchema,
    schemaName: 'CompanyCreditReport',
    defaultMeasure: defaultMeasureOf('company-credit-report'),
    lookupName: 'creditReport',
    texts: {
      en: {
        summary: 'Credit report',
        description: 'Identity, registry data, headcount, risk indicators, state aids, shareholders, officers and up to 5 recent years of headline figures (without line items).',
        parameter: fiscalCodeTexts.en,
      },
      it: {
        summary: 'Report di credito',
        description: 'Anagrafica, dati camerali, numero di dipendenti, indicatori di rischio, aiuti di Stato, soci, esponenti e fino a 5 anni recenti di dati di sintesi (senza le singole voci di bilancio).',
        parameter: fiscalCodeTexts.it,
      },
    },
  },
  {
    slug: 'company-profile',
    path: '/companies/{taxId}/profile',
    param: { name: 'taxId', schema: taxIdParamSchema },
    data: companyProfileDataSchema,
    schemaName: 'CompanyProfile',
    defaultMeasure: defaultMeasureOf('company-profile'),
    lookupName: 'companyProfile',
    texts: {
      en: {
        summary: 'Company profile',
        description: 'Identity and latest figures, then one branch chosen by size (EU SME definition): large companies get `peerCount` and up to 10 `peers` of the same NACE division nearest in size (by latest revenue, or by headcount when the company has no revenue on file); smaller companies get `risk` (risk indicators, state aids and up to 5 years of history). One price covers either branch.',
        parameter: taxIdTexts.en,
      },
      it: {
        summary: 'Profilo aziendale',
        description: 'Anagrafica e ultimi dati, poi una sola sezione scelta in base alla dimensione (definizione UE di PMI): le grandi imprese ricevono `peerCount` e fino a 10 `peers` della stessa divisione NACE più vicini per dimensione (per ultimo fatturato, o per numero di dipendenti se l\'impresa non ha fatturato registrato); le altre ricevono `risk` (indicatori di rischio, aiuti di Stato e fino a 5 anni di storico). Un unico prezzo copre entrambe le sezioni.',
        parameter: taxIdTexts.it,
      },
    },
  },
  {
    slug: 'company-financials',
    path: '/companies/{taxId}/financials',
    param: { name: 'taxId', schema: taxIdParamSchema },
    data: companyFinancialsDataSchema,
    schemaName: 'CompanyFinancials',
    defaultMeasure: defaultMeasureOf('company-financials'),
    lookupName: 'companyFinancials',
    texts: {
      en: {
        summary: 'Company financials',
        description: 'Identity, whether figures are consolidated, the latest filed year and the latest annual snapshot.',
        parameter: taxIdTexts.en,
      },
      it: {
        summary: 'Dati finanziari aziendali',
        description: 'Anagrafica, se i dati provengono da bilanci consolidati, l\'ultimo anno depositato e l\'ultima fotografia annuale.',
        parameter: taxIdTexts.it,
      },
    },
  },
];

export function findEndpoint(slug: string): EndpointDefinition | undefined {
  return endpointCatalogue.find((e) => e.slug === slug);
}
