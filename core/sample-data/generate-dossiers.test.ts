import { describe, expect, it } from 'vitest';
import { parseDossierValue } from '../companies/import/index.js';
import { companyDossierSchema, type CompanyDossierInput } from '../companies/schemas/index.js';
import { metricCatalogue } from '../companies/metric-catalogue.js';
import { isValidCodiceFiscale, isValidPartitaIva } from '../companies/italian-identifiers.js';
import { sizeClassOf } from './financial-statements.js';
import { generateDossiers, SAMPLE_SOURCE } from './generate-dossiers.js';
import { LATEST_YEAR_RANGE } from './latest-year-range.js';
import { foreignParents } from './names.js';
import { loadReferenceData } from './reference-data.js';

const reference = loadReferenceData();
const SEED = 7_310_041;
const dossiers = [...generateDossiers({ count: 1500, seed: SEED, reference, includeDerivedChanges: true })];
const byCode = new Map(dossiers.map((d) => [d.fiscalCode, d]));
const comuneKeys = new Set(reference.comuni.flatMap((c) => c.postalCodes.map((cap) => `${c.name}|${c.sigla}|${cap}`)));
const atecoKeys = new Set(reference.ateco.map((a) => `${a.code}|${a.naceCode}|${a.section}`));

type Year = NonNullable<CompanyDossierInput['years']>[number];
const values = (y: Year) => new Map(y.metrics!.map((m) => [m.slug, m.value]));
const latestFiled = (d: CompanyDossierInput) => d.years!.filter((y) => !y.isForecasted).at(-1)!;

describe('sample dossier generator', () => {
  it('when run twice with the same seed then the output is identical, and another seed differs', () => {
    const again = [...generateDossiers({ count: 1500, seed: SEED, reference, includeDerivedChanges: true })];
    expect(JSON.stringify(again)).toBe(JSON.stringify(dossiers));
    const other = [...generateDossiers({ count: 50, seed: SEED + 1, reference })];
    expect(other[0]!.fiscalCode).not.toBe(dossiers[0]!.fiscalCode);
  });

  it('when validated then every dossier passes the import schema and is labelled synthetic', () => {
    for (const d of dossiers) {
      const result = companyDossierSchema.safeParse(d);
      expect(result.success ? 'ok' : JSON.stringify(result.error.issues.slice(0, 2))).toBe('ok');
      expect(d.source).toBe(SAMPLE_SOURCE);
    }
  });

  it('when the latest year is either end of its range then every company of many seeds is one the import takes, and a year past either end is refused', () => {
    for (const latestYear of [LATEST_YEAR_RANGE.min, LATEST_YEAR_RANGE.max]) {
      for (let k = 1; k <= 6; k++) {
        let line = 0;
        for (const d of generateDossiers({ count: 300, seed: SEED + k, latestYear, reference, includeDerivedChanges: k % 2 === 0 })) {
          const entry = parseDossierValue(d, ++line);
          expect(entry.ok || entry.rejection.reason, `latest year ${latestYear}, seed ${SEED + k}, company ${line}`).toBe(true);
        }
      }
    }
    const range = `latestYear must be a year from ${LATEST_YEAR_RANGE.min} to ${LATEST_YEAR_RANGE.max}, `;
    for (const latestYear of [1700, LATEST_YEAR_RANGE.min - 1, LATEST_YEAR_RANGE.max + 1, 2300]) {
      expect(() => generateDossiers({ count: 1, seed: SEED, latestYear, reference }).next()).toThrow(range);
    }
  });

  it('when codes are generated then each is unique and has a valid check digit or character', () => {
    expect(byCode.size).toBe(dossiers.length);
    for (const d of dossiers) {
      expect(isValidPartitaIva(d.vatNumber!)).toBe(true);
      if (d.legalForm === 'DI') {
        expect(d.fiscalCode).toHaveLength(16);
        expect(isValidCodiceFiscale(d.fiscalCode)).toBe(true);
      } else expect(d.fiscalCode).toBe(d.vatNumber);
    }
    const soleTraders = dossiers.filter((d) => d.legalForm === 'DI').length / dossiers.length;
    expect(soleTraders).toBeGreaterThan(0.06);
    expect(soleTraders).toBeLessThan(0.15);
  });

  it('when places and activities are chosen then they are real comuni and ATECO codes with their NACE section', () => {
    for (const d of dossiers) {
      expect(comuneKeys.has(`${d.municipality}|${d.province}|${d.address!.postalCode}`)).toBe(true);
      expect(d.address!.locality).toBe(d.municipality);
      expect(atecoKeys.has(`${d.atecoCode}|${d.naceCode}|${d.naceSection}`)).toBe(true);
      expect(d.registry!.cciaa).toBe(d.province);
      expect(d.registry!.rea).toMatch(new RegExp(`^${d.province}-\\d{6,7}$`));
      expect(d.registry!.pec).toMatch(/^[a-z0-9]+@[a-z.]+\.it$/);
      // The partita IVA's office code is the province's ISTAT code.
      expect(Number(d.vatNumber!.slice(7, 10))).toBe(reference.comuni.find((c) => c.name === d.municipality && c.sigla === d.province)!.provinceCode);
    }
  });

  it('when statements are generated then for every company and year the balance sheet balances and subtotals add up', () => {
    for (const d of dossiers) {
      expect(d.years!.length).toBeGreaterThanOrEqual(3);
      expect(d.years!.filter((y) => !y.isForecasted).length).toBeLessThanOrEqual(10);
      let previousEquityParts: Map<string, number> | undefined;
      for (const y of d.years!) {
        const v = values(y);
        const g = (slug: string) => v.get(slug) ?? 0;
        const where = `${d.fiscalCode} ${y.year}`;
        expect(g('total_assets'), where).toBe(g('total_liabilities') + g('total_equity'));
        expect(g('total_liabilities_and_equity'), where).toBe(g('total_assets'));
        expect(g('total_assets'), where).toBe(g('subscribed_capital_unpaid') + g('total_fixed_assets') + g('total_current_assets') + g('prepaid_expenses_and_accrued_income'));
        expect(g('total_fixed_assets'), where).toBe(g('intangible_assets') + g('tangible_assets') + g('financial_fixed_assets'));
        expect(g('total_current_assets'), where).toBe(g('inventories') + g('receivables') + g('current_financial_assets') + g('cash_and_equivalents'));
        expect(g('total_liabilities'), where).toBe(g('provisions_for_risks_and_charges') + g('employee_severance_indemnity') + g('total_debts') + g('accrued_expenses_and_deferred_income'));
        expect(g('total_debts'), where).toBe(g('debts_due_within_one_year') + g('debts_due_beyond_one_year'));
        expect(g('total_equity'), where).toBe(g('share_capital') + g('reserves') + g('retained_earnings') + g('net_income'));
        expect(g('total_production_value'), where).toBe(g('revenue') + g('change_in_product_inventories') + g('change_in_contract_work_in_progress') + g('capitalised_own_work') + g('other_revenues'));
        expect(g('total_production_costs'), where).toBe(['raw_materials_costs', 'services_costs', 'leases_costs', 'personnel_costs', 'depreciation_amortisation_writedowns', 'change_in_raw_materials_inventories', 'provisions_for_risks', 'other_provisions', 'other_operating_expenses'].reduce((s, k) => s + g(k), 0));
        expect(g('operating_result'), where).toBe(g('total_production_value') - g('total_production_costs'));
        expect(g('total_financial_income_and_charges'), where).toBe(g('financial_income') - g('interest_and_other_financial_charges'));
        expect(g('profit_before_tax'), where).toBe(g('operating_result') + g('total_financial_income_and_charges') + g('financial_value_adjustments'));
        expect(g('net_income'), where).toBe(g('profit_before_tax') - g('income_taxes'));
        expect(g('ebitda'), where).toBe(g('operating_result') + g('depreciation_amortisation_writedowns') + g('provisions_for_risks') + g('other_provisions'));
        if (g('total_assets') > 0) expect(v.get('equity_ratio'), where).toBeCloseTo(g('total_equity') / g('total_assets'), 3);
        for (const m of y.metrics!) expect(Number.isInteger(m.value) || metricCatalogue.find((c) => c.slug === m.slug)?.unit !== 'EUR', `${where} ${m.slug}`).toBe(true);
        // Last year's result is carried into equity: reserves and retained earnings move by at most
        // that result (less dividends), unless shareholders recapitalised a negative equity.
        if (previousEquityParts) {
          const lastResult = previousEquityParts.get('net_income')!;
          const delta = g('reserves') + g('retained_earnings') - previousEquityParts.get('reserves')! - previousEquityParts.get('retained_earnings')!;
          expect(delta, where).toBeGreaterThanOrEqual(Math.min(0, lastResult));
          if (delta > Math.max(0, lastResult)) expect(g('total_equity'), `${where} recapitalised`).toBeGreaterThan(0);
          expect(g('share_capital'), where).toBe(previousEquityParts.get('share_capital'));
        }
        previousEquityParts = new Map([['reserves', g('reserves')], ['retained_earnings', g('retained_earnings')], ['net_income', g('net_income')], ['share_capital', g('share_capital')]]);
        expect(y.size, where).toBe(sizeClassOf(y.employees!, g('revenue'), g('total_assets')));
      }
    }
  });

  it('when previous values are emitted then they are the prior year value and the yoy change follows', () => {
    for (const d of dossiers.slice(0, 200)) {
      const years = d.years!;
      for (let i = 1; i < years.length; i++) {
        const prev = values(years[i - 1]!);
        for (const m of years[i]!.metrics!) {
          expect(m.previousValue).toBe(prev.get(m.slug) ?? null);
          if (m.previousValue) expect(m.yoyChange).toBeCloseTo((m.value - m.previousValue) / Math.abs(m.previousValue), 3);
        }
      }
    }
  });

  it('when holders are generated then each says its kind: companies of the set and foreign parents are companies, the rest people', () => {
    let foreign = 0;
    for (const d of dossiers) {
      for (const h of d.shareholders!) {
        const isCompany = h.fiscalCode !== null || (foreignParents as readonly string[]).includes(h.name!);
        if (isCompany && h.fiscalCode === null) foreign++;
        expect(h.kind, h.name!).toBe(isCompany ? 'company' : 'person');
      }
      for (const h of d.beneficialOwners!) expect(h.kind, h.name!).toBe('person');
      for (const h of d.subsidiaries!) expect(h.kind, h.name!).toBe('company');
    }
    expect(foreign).toBeGreaterThan(0);
  });

  it('when ownership is generated then holders and subsidiaries point at companies of the set and chains run four or more levels deep', () => {
    let linked = 0;
    for (const d of dossiers) {
      for (const h of [...d.shareholders!, ...d.subsidiaries!]) {
        if (h.fiscalCode) {
          linked++;
          expect(byCode.get(h.fiscalCode)?.legalName).toBe(h.name);
        }
      }
      for (const s of d.subsidiaries!) expect(byCode.get(s.fiscalCode!)!.shareholders!.some((h) => h.fiscalCode === d.fiscalCode)).toBe(true);
      const total = d.shareholders!.reduce((a, h) => a + (h.share ?? 0), 0);
      if (d.shareholders!.length > 0) expect(total).toBeCloseTo(1, 3);
    }
    expect(linked).toBeGreaterThan(50);
    // Depth of control: follow the majority company shareholder upwards.
    const depth = (d: CompanyDossierInput): number => {
      const parent = d.shareholders!.find((h) => h.fiscalCode && (h.share ?? 0) > 0.5);
      return parent ? 1 + depth(byCode.get(parent.fiscalCode!)!) : 1;
    };
    const depths = dossiers.map(depth);
    expect(depths.filter((n) => n >= 4).length).toBeGreaterThan(5);
    const chained = dossiers.find((d) => depth(d) >= 3)!;
    expect(chained.controllingEntity).not.toBeNull();
    expect(chained.beneficialOwners!.length).toBeGreaterThan(0);
  });

  it('when sizes are mixed then at least 3% are large and large companies have peers in their NACE division', () => {
    const latestSizes = dossiers.map((d) => latestFiled(d).size);
    const large = dossiers.filter((_, i) => latestSizes[i] === 'large');
    expect(large.length / dossiers.length).toBeGreaterThanOrEqual(0.03);
    for (const size of ['micro', 'small', 'medium'] as const) expect(latestSizes.filter((s) => s === size).length).toBeGreaterThan(30);
    const perDivision = new Map<string, number>();
    for (const d of large) perDivision.set(d.naceCode!.slice(0, 2), (perDivision.get(d.naceCode!.slice(0, 2)) ?? 0) + 1);
    const withPeers = large.filter((d) => perDivision.get(d.naceCode!.slice(0, 2))! >= 3).length;
    expect(withPeers / large.length).toBeGreaterThan(0.8);
  });

  it('when the set is generated then it has dissolved companies, forecast years, risk flags, state aids, branches and officers', () => {
    const share = (f: (d: CompanyDossierInput) => boolean) => dossiers.filter(f).length / dossiers.length;
    expect(share((d) => d.dissolutionYear !== null)).toBeGreaterThan(0.025);
    expect(share((d) => d.dissolutionYear !== null)).toBeLessThan(0.08);
    for (const d of dossiers.filter((x) => x.dissolutionYear !== null)) {
      expect(d.years!.every((y) => y.year < d.dissolutionYear!)).toBe(true);
      expect(d.officers!.some((o) => o.roleCategory === 'liquidator')).toBe(true);
    }
    expect(share((d) => d.years!.some((y) => y.isForecasted && y.statementDate === null))).toBeGreaterThan(0.1);
    for (const d of dossiers.filter((x) => x.years!.some((y) => y.isForecasted))) expect(d.years!.at(-1)!.year).toBe(latestFiled(d).year + 1);
    expect(share((d) => d.risk!.assetEncumbrances === true)).toBeGreaterThan(0.01);
    expect(share((d) => (d.stateAids?.count ?? 0) > 0)).toBeGreaterThan(0.2);
    expect(share((d) => d.branches!.length > 0)).toBeGreaterThan(0.05);
    for (const d of dossiers) {
      expect(d.officers!.some((o) => o.roleCategory === 'legal_representative' || o.roleCategory === 'liquidator')).toBe(true);
      for (const o of d.officers!) expect(o.name).toMatch(/^\S+ \S.*$/);
    }
  });
});
