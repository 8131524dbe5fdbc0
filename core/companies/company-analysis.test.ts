import { describe, expect, it } from 'vitest';
import { analyzeCompany, type PeerFigures } from './company-analysis.js';
import type { CompanyReportData } from './schemas/index.js';

type Year = { year: number; values: Record<string, number>; isForecasted?: boolean; employees?: number | null };

function report(years: Year[], overrides: Partial<CompanyReportData> = {}): CompanyReportData {
  return {
    isConsolidated: false,
    latestFiledYear: years.find((y) => !y.isForecasted)?.year ?? null,
    identity: {
      legalName: 'Analisi S.R.L.', legalForm: 'SRL', foundingYear: 2000, incorporationDate: null, isQuoted: false, vatNumber: null,
      fiscalCode: '01234567890', naceCode: '62.01', naceSection: 'J', address: null,
      activityStartDate: null, dissolutionYear: null, foreignOwned: null, controllingEntity: null,
    },
    registry: null,
    headcount: null,
    risk: { protestsOfBill: false, insolvencyProceedings: true, insolvencyApplications: null, assetEncumbrances: false, officersWithRiskIndicators: false },
    stateAids: null,
    ownership: { shareholders: [], beneficialOwners: [], subsidiaries: [] },
    officers: [],
    branches: [],
    latest: null,
    financials: years.map((y) => ({
      year: y.year, isForecasted: y.isForecasted ?? false, size: 'small', statementDate: null, employees: y.employees ?? null, employeesYoY: null,
      metrics: Object.entries(y.values).map(([slug, value]) => ({ slug, name: slug, categories: [], unit: 'EUR', value, previousValue: null, yoyChange: null, marketValue: null, score: null })),
    })),
    ...overrides,
  };
}

const asOf = new Date('2025-06-01T00:00:00Z');
const find = <T extends { key: string }>(list: T[], key: string) => list.find((f) => f.key === key)!;

describe('analyzeCompany', () => {
  it('when an input of a ratio is not reported then the ratio is null with a note naming the missing slug', () => {
    const a = analyzeCompany(report([{ year: 2024, values: { revenue: 1_000, net_income: 50 } }]), { peers: null, asOf });
    expect(find(a.profitability, 'net_margin')).toMatchObject({ value: 0.05, note: null });
    expect(find(a.profitability, 'roe')).toMatchObject({ value: null, note: expect.stringContaining('total_equity') });
  });

  it('when equity is negative then ROE is not meaningful and a high-severity negative_equity flag cites the figure', () => {
    const a = analyzeCompany(report([{ year: 2024, values: { net_income: 10, total_equity: -500 } }]), { peers: null, asOf });
    expect(find(a.profitability, 'roe').value).toBeNull();
    expect(a.riskFlags).toContainEqual(expect.objectContaining({ code: 'negative_equity', severity: 'high', inputs: [{ slug: 'total_equity', year: 2024, value: -500 }] }));
  });

  it('when registry indicators are set or unknown then set ones are flags and unknown ones are listed apart', () => {
    const a = analyzeCompany(report([]), { peers: null, asOf });
    expect(a.riskFlags.map((f) => f.code)).toEqual(['insolvency_proceedings', 'no_filed_figures']);
    expect(a.unknownRiskIndicators).toEqual(['insolvencyApplications']);
  });

  it('when losses run in consecutive years then one consecutive_losses flag lists each year, and a gap in filings breaks the run', () => {
    const run = analyzeCompany(report([2024, 2023, 2022].map((year) => ({ year, values: { net_income: -1 } }))), { peers: null, asOf });
    const flag = run.riskFlags.find((f) => f.code === 'consecutive_losses')!;
    expect(flag.inputs.map((i) => i.year)).toEqual([2024, 2023, 2022]);
    const gap = analyzeCompany(report([{ year: 2024, values: { net_income: -1 } }, { year: 2022, values: { net_income: -1 } }]), { peers: null, asOf });
    expect(gap.riskFlags.map((f) => f.code)).toContain('net_loss');
    expect(find(gap.growth, 'revenue_growth').note).toContain('2023');
  });

  it('when a lower-is-better ratio falls then its trend is improving, and forecast years are ignored', () => {
    const a = analyzeCompany(report([
      { year: 2025, isForecasted: true, values: { total_debts: 1, total_equity: 100 } },
      { year: 2024, values: { total_debts: 100, total_equity: 100 } },
      { year: 2023, values: { total_debts: 200, total_equity: 100 } },
    ]), { peers: null, asOf });
    const d2e = find(a.solvency, 'debt_to_equity');
    expect(a.yearsAnalysed).toEqual([2024, 2023]);
    expect(d2e).toMatchObject({ value: 1, year: 2024, trend: 'improving', history: [{ year: 2024, value: 1 }, { year: 2023, value: 2 }] });
  });

  it('when the net financial debt is computed then it is the catalogue\'s net_financial_position: bank debts less cash and current financial assets', () => {
    const a = analyzeCompany(report([{ year: 2025, values: { bank_debts: 300_000, cash_and_equivalents: 50_000, current_financial_assets: 40_000, net_financial_position: 210_000, ebitda: 90_000 } }]), { peers: null, asOf });
    expect(find(a.solvency, 'net_financial_debt')).toMatchObject({ value: 210_000, note: null });
    expect(find(a.solvency, 'net_debt_to_ebitda')).toMatchObject({ value: 2.3333, note: null });
    // Most companies file no current financial assets: counted as none, and said so.
    const noFinancialAssets = analyzeCompany(report([{ year: 2025, values: { bank_debts: 900_000, cash_and_equivalents: 250_000, ebitda: 700_000 } }]), { peers: null, asOf });
    expect(find(noFinancialAssets.solvency, 'net_financial_debt')).toMatchObject({ value: 650_000, note: 'current_financial_assets not reported for 2025: counted as 0.' });
    expect(find(noFinancialAssets.solvency, 'net_debt_to_ebitda')).toMatchObject({ value: 0.9286 });
    const noBankDebts = analyzeCompany(report([{ year: 2025, values: { cash_and_equivalents: 250_000 } }]), { peers: null, asOf });
    expect(find(noBankDebts.solvency, 'net_financial_debt')).toMatchObject({ value: null, note: 'Not computable: bank_debts not reported for 2025.' });
  });

  it('when revenue is known for the first and last year then compound growth is computed over the span', () => {
    const a = analyzeCompany(report([{ year: 2024, values: { revenue: 121 } }, { year: 2023, values: { revenue: 110 } }, { year: 2022, values: { revenue: 100 } }]), { peers: null, asOf });
    expect(find(a.growth, 'revenue_cagr').value).toBeCloseTo(0.1, 4);
    expect(find(a.growth, 'revenue_growth').value).toBe(0.1);
  });

  it('when peers are given then the percentile counts peers below, ties as half, and the median is reported', () => {
    const peers: PeerFigures = { naceDivision: '62', peerCount: 4, peers: [50, 100, 150, 200].map((revenue) => new Map([['revenue', revenue]])) };
    const a = analyzeCompany(report([{ year: 2024, values: { revenue: 150 } }]), { peers, asOf });
    expect(find(a.peers!.comparisons, 'revenue')).toEqual({ key: 'revenue', name: 'Revenue', value: 150, percentile: 0.625, peerMedian: 125, peersCompared: 4 });
  });
});
