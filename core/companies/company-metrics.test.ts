import { describe, expect, it } from 'vitest';
import { selectCompanyMetrics } from './company-metrics.js';
import type { CompanyReportData } from './schemas/index.js';

const metric = (slug: string, categories: string[], value: number) => ({ slug, name: slug, categories, unit: 'EUR', value, previousValue: value - 1, yoyChange: 0.5, marketValue: null, score: null });
const year = (y: number, isForecasted = false) => ({
  year: y, isForecasted, size: null, statementDate: null, employees: null, employeesYoY: null,
  metrics: [metric('revenue', ['income_statement', 'revenue'], y), metric('total_equity', ['balance_sheet', 'equity'], y * 2), metric('current_ratio', ['ratio', 'liquidity'], 1)],
});
const report = { identity: { fiscalCode: '01234567890', legalName: 'Metriche S.R.L.' }, financials: [year(2026, true), year(2024), year(2023)] } as unknown as CompanyReportData;
const base = { fiscalCode: '01234567890', includeForecasts: false };

describe('selectCompanyMetrics', () => {
  it('when slugs and categories are both given then a metric in either is returned, as a series newest first', () => {
    const m = selectCompanyMetrics(report, { ...base, slugs: ['revenue'], categories: ['liquidity'] });
    expect(m.metrics.map((s) => s.slug)).toEqual(['revenue', 'current_ratio']);
    expect(m.metrics[0]!.values).toEqual([
      { year: 2024, isForecasted: false, value: 2024, previousValue: 2023, yoyChange: 0.5, marketValue: null, score: null },
      { year: 2023, isForecasted: false, value: 2023, previousValue: 2022, yoyChange: 0.5, marketValue: null, score: null },
    ]);
  });

  it('when nothing is chosen then every metric of every filed year comes back, forecasts only on request', () => {
    expect(selectCompanyMetrics(report, base)).toMatchObject({ years: [2024, 2023], availableYears: [2026, 2024, 2023], forecastYears: [2026], missingYears: [] });
    expect(selectCompanyMetrics(report, base).metrics).toHaveLength(3);
    expect(selectCompanyMetrics(report, { ...base, includeForecasts: true }).years).toEqual([2026, 2024, 2023]);
  });

  it('when a requested slug or year is not on file then each is listed as missing', () => {
    const m = selectCompanyMetrics(report, { ...base, slugs: ['revenue', 'ebitda'], years: [2023, 2019] });
    expect(m.years).toEqual([2023]);
    expect(m.missingSlugs).toEqual(['ebitda']);
    expect(m.missingYears).toEqual([2019]);
  });

  it('when a forecast year is asked without includeForecasts then it is listed as missing and named a forecast; with it, it is covered', () => {
    const without = selectCompanyMetrics(report, { ...base, years: [2026, 2024] });
    expect(without).toMatchObject({ years: [2024], forecastYears: [2026], missingYears: [2026] });
    expect(selectCompanyMetrics(report, { ...base, years: [2026, 2024], includeForecasts: true })).toMatchObject({ years: [2026, 2024], missingYears: [] });
  });
});
