import { randomInt } from 'node:crypto';
import { companyDossierSchema, type CompanyDossier, type CompanyDossierInput } from '../../core/companies/schemas/index.js';

/**
 * Fiscal codes for one test file: a random 6-digit prefix and a counter, so files running in
 * parallel on the shared database (and sample data) never write the same company.
 */
export function fiscalCodes(): () => string {
  const prefix = String(randomInt(100_000, 1_000_000));
  let n = 0;
  return () => `${prefix}${String(n++).padStart(5, '0')}`;
}

export type YearSpec = { year: number; revenue?: number; totalAssets?: number; employees?: number | null; isForecasted?: boolean };

/** A minimal valid dossier: fiscal code and name, everything else defaulted by the schema. */
export function dossier(fiscalCode: string, input: Partial<CompanyDossierInput> = {}): CompanyDossier {
  return companyDossierSchema.parse({ fiscalCode, legalName: `Test company ${fiscalCode}`, ...input });
}

/** Years with the two metrics the store reads (revenue, total assets) and a few more. */
export function years(specs: YearSpec[]): NonNullable<CompanyDossierInput['years']> {
  return specs.map((s) => ({
    year: s.year,
    isForecasted: s.isForecasted ?? false,
    statementDate: s.isForecasted ? null : `${s.year}-12-31`,
    employees: s.employees === undefined ? 10 : s.employees,
    metrics: [
      ...(s.revenue === undefined ? [] : [{ slug: 'revenue', value: s.revenue }]),
      ...(s.totalAssets === undefined ? [] : [{ slug: 'total_assets', value: s.totalAssets }]),
      { slug: 'net_income', value: Math.round((s.revenue ?? 0) * 0.05) },
    ],
  }));
}

/** A dossier with every optional part filled, for shape tests. */
export function fullDossier(fiscalCode: string, related: { shareholder: string; subsidiary: string }, input: Partial<CompanyDossierInput> = {}): CompanyDossier {
  const address = { line1: 'Via Roma 1', line2: null, locality: 'Milano', postalCode: '20121', countryCode: 'IT' };
  return dossier(fiscalCode, {
    vatNumber: `IT${fiscalCode.slice(0, 11).padStart(11, '0')}`,
    legalForm: 'SRL',
    foundingYear: 1998,
    incorporationDate: '1998-03-14',
    isQuoted: false,
    naceCode: '62.01',
    naceSection: 'J',
    atecoCode: '62.01.00',
    address,
    province: 'MI',
    municipality: 'Milano',
    activityStartDate: '1998-04-01',
    dissolutionYear: null,
    foreignOwned: false,
    controllingEntity: 'Holding Test SPA',
    isConsolidated: true,
    registry: { pec: 'test@pec.it', cciaa: 'MI', rea: 'MI-123456' },
    headcount: { employees: 42, asOf: '2024-12-31' },
    risk: { protestsOfBill: false, insolvencyProceedings: false, insolvencyApplications: null, assetEncumbrances: true, officersWithRiskIndicators: false },
    stateAids: { count: 3, countLast36Months: 1, amount: 120_000, amountLast36Months: 20_000 },
    shareholders: [{ name: 'Holding Test SPA', share: 0.6, fiscalCode: related.shareholder }, { name: 'Mario Rossi', share: 0.4 }],
    beneficialOwners: [{ name: 'Mario Rossi', share: 0.64 }],
    subsidiaries: [{ name: 'Sub Test SRL', share: 1, fiscalCode: related.subsidiary }],
    officers: [
      { name: 'Mario Rossi', role: 'Amministratore unico', roleCategory: 'legal_representative' },
      { name: 'Anna Bianchi', role: 'Sindaco', roleCategory: 'statutory_auditor' },
      { name: 'Luca Verdi', role: null, roleCategory: 'proxy' },
    ],
    branches: [{ legalName: 'Unità locale Torino', address: { ...address, locality: 'Torino', postalCode: '10121' } }, { legalName: 'Magazzino', address: null }],
    years: [
      ...years(Array.from({ length: 12 }, (_, i) => ({ year: 2013 + i, revenue: 1_000_000 + i * 100_000, totalAssets: 800_000 + i * 50_000, employees: 30 + i }))),
      ...years([{ year: 2025, revenue: 2_500_000, isForecasted: true, employees: null }]),
    ],
    source: 'test',
    ...input,
  });
}
