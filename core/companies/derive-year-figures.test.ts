import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logging/index.js';
import { testDb } from '../../test/support/database.js';
import { dossier, fiscalCodes } from '../../test/support/company-dossiers.js';
import { selectCompanyMetrics } from './company-metrics.js';
import { createCompanyStore } from './company-store.js';
import { comparesWith, deriveYearFigures, metricChanges, readStoredMetric, storedMetricValues, yoyChange, type DerivedYear } from './derive-year-figures.js';
import type { CompanyDossierInput } from './schemas/index.js';
import { upsertCompanies } from './write-companies.js';

type YearInput = NonNullable<CompanyDossierInput['years']>[number];
const year = (y: number, isForecasted: boolean, revenue: number, employees: number, extra: Partial<YearInput> = {}): YearInput =>
  ({ year: y, isForecasted, employees, metrics: [{ slug: 'revenue', value: revenue }], ...extra });
const yearsOf = (years: YearInput[]) => dossier('00905811006', { years }).years;

// What reading gives (assemble-company-parts.ts): each line item's changes from year - 1's stored values.
function asRead(derived: DerivedYear[], y: number) {
  const stored = derived.find((d) => d.year === y)!;
  const before = derived.find((d) => d.year === y - 1);
  return {
    employeesYoY: stored.employeesYoY,
    metrics: stored.metrics.map((row) => {
      const m = readStoredMetric(row);
      return { slug: m.slug, ...metricChanges(m, before && storedMetricValues(before.metrics)) };
    }),
  };
}

describe('deriveYearFigures', () => {
  it('when a filed year follows a forecast year then it is compared with nothing, as after a gap', () => {
    const derived = deriveYearFigures(yearsOf([year(2024, true, 9_000_000, 100), year(2025, false, 3_000_000, 40)]));
    expect(asRead(derived, 2025)).toEqual({ employeesYoY: null, metrics: [{ slug: 'revenue', previousValue: null, yoyChange: null }] });
    // Stored explicitly: reading alone would take the forecast's 9,000,000.
    expect(derived[1]!.metrics).toEqual([['revenue', 3_000_000, { previousValue: null }]]);
  });

  it('when a forecast year follows a filed or a forecast year then it is compared with it', () => {
    const derived = deriveYearFigures(yearsOf([year(2025, false, 3_000_000, 40), year(2026, true, 3_600_000, 50), year(2027, true, 4_500_000, 55)]));
    expect(asRead(derived, 2026)).toEqual({ employeesYoY: 0.25, metrics: [{ slug: 'revenue', previousValue: 3_000_000, yoyChange: 0.2 }] });
    expect(asRead(derived, 2027)).toEqual({ employeesYoY: 0.1, metrics: [{ slug: 'revenue', previousValue: 3_600_000, yoyChange: 0.25 }] });
    expect(derived.flatMap((d) => d.metrics)).toEqual([['revenue', 3_000_000], ['revenue', 3_600_000], ['revenue', 4_500_000]]);
  });

  it('when a filed year after a forecast states its own previous value and changes then they are kept', () => {
    const stated = { employeesYoY: -0.5, metrics: [{ slug: 'revenue', value: 3_000_000, previousValue: 2_000_000, yoyChange: 0.5 }, { slug: 'total_assets', value: 7, yoyChange: 0.1 }] };
    const derived = deriveYearFigures(yearsOf([year(2024, true, 9_000_000, 100, { metrics: [{ slug: 'revenue', value: 9_000_000 }, { slug: 'total_assets', value: 8 }] }), year(2025, false, 0, 40, stated)]));
    expect(asRead(derived, 2025)).toEqual({
      employeesYoY: -0.5,
      metrics: [{ slug: 'revenue', previousValue: 2_000_000, yoyChange: 0.5 }, { slug: 'total_assets', previousValue: null, yoyChange: 0.1 }],
    });
  });

  it('when years are compared then only year - 1 counts, and a filed year never with a forecast', () => {
    const y = (n: number, isForecasted: boolean) => ({ year: n, isForecasted });
    expect([comparesWith(y(2025, false), y(2024, false)), comparesWith(y(2025, true), y(2024, false)), comparesWith(y(2025, true), y(2024, true))]).toEqual([true, true, true]);
    expect([comparesWith(y(2025, false), y(2024, true)), comparesWith(y(2025, false), y(2023, false)), comparesWith(y(2025, false), undefined)]).toEqual([false, false, false]);
  });
});

describe('yoyChange', () => {
  it('when a change falls on a half of the fourth decimal then a fall rounds as the same rise does, away from zero', () => {
    expect(yoyChange(87_655, 100_000)).toBe(-0.1235);
    expect(yoyChange(112_345, 100_000)).toBe(0.1235);
    expect(yoyChange(99_995, 100_000)).toBe(-0.0001);
    expect(yoyChange(2, 3)).toBe(-0.3333);
    expect(yoyChange(-87_655, -100_000)).toBe(0.1235);
    expect(yoyChange(5, 0)).toBeNull();
  });
});

describe('derived figures as the store returns them', () => {
  const db = testDb({ applicationName: 'derive-year-figures.test' });
  const store = createCompanyStore({ db, queryTimeoutMs: 5_000, logger: createLogger({ level: 'silent' }) });
  const code = fiscalCodes()();
  beforeAll(async () => {
    await upsertCompanies(db, [dossier(code, { years: [year(2024, true, 9_000_000, 100), year(2025, false, 3_000_000, 40), year(2026, true, 3_300_000, 44)] })]);
  });
  afterAll(() => db.destroy());

  it('when a filed year follows a forecast then the report, financials, profile and metrics give no change for it, and the next forecast is compared with it', async () => {
    const report = (await store.companyReport(code))!;
    const revenueOf = (y: number) => report.financials.find((f) => f.year === y)!.metrics.find((m) => m.slug === 'revenue');
    expect(revenueOf(2025)).toMatchObject({ value: 3_000_000, previousValue: null, yoyChange: null });
    expect(revenueOf(2026)).toMatchObject({ value: 3_300_000, previousValue: 3_000_000, yoyChange: 0.1 });
    expect(report.financials.map((f) => [f.year, f.employeesYoY])).toEqual([[2026, 0.1], [2025, null], [2024, null]]);
    expect(report.latest).toMatchObject({ year: 2025, employeesYoY: null });
    expect((await store.companyFinancials(code))!.latest).toMatchObject({ year: 2025, employeesYoY: null });
    expect((await store.companyProfile(code))!.latest).toMatchObject({ year: 2025, employeesYoY: null });
    const metrics = selectCompanyMetrics(report, { fiscalCode: code, slugs: ['revenue'], includeForecasts: true });
    expect(metrics.metrics[0]!.values.map((v) => [v.year, v.previousValue, v.yoyChange])).toEqual([[2026, 3_000_000, 0.1], [2025, null, null], [2024, null, null]]);
  });
});
