import { metricCatalogue } from '../companies/metric-catalogue.js';
import type { Rng } from './prng.js';

// Synthetic annual accounts that add up the way a filed Italian bilancio does: every subtotal is
// the sum of its lines, the income statement's result feeds equity, and the balance sheet
// balances (cash or bank debt absorbs the difference, as it does in real life). Money is whole
// euros: subtotals are summed from already-rounded lines, so they are exact.

export type SizeClass = 'micro' | 'small' | 'medium' | 'large';

interface SectorProfile {
  revenuePerEmployee: number;
  personnelCost: number;
  ebitdaMargin: number;
  assetIntensity: number;
  tangibleShare: number;
  materialsShare: number;
  inventoryDays: number;
  dso: number;
}

const defaults: SectorProfile = { revenuePerEmployee: 150_000, personnelCost: 40_000, ebitdaMargin: 0.09, assetIntensity: 0.8, tangibleShare: 0.2, materialsShare: 0.3, inventoryDays: 8, dso: 75 };
const sectors: Record<string, Partial<SectorProfile>> = {
  A: { revenuePerEmployee: 150_000, personnelCost: 28_000, ebitdaMargin: 0.1, assetIntensity: 1.3, tangibleShare: 0.5, materialsShare: 0.5, inventoryDays: 90, dso: 70 },
  B: { revenuePerEmployee: 250_000, ebitdaMargin: 0.14, assetIntensity: 1.3, tangibleShare: 0.5, materialsShare: 0.35, inventoryDays: 30 },
  C: { revenuePerEmployee: 220_000, personnelCost: 42_000, ebitdaMargin: 0.09, assetIntensity: 0.9, tangibleShare: 0.3, materialsShare: 0.6, inventoryDays: 60, dso: 90 },
  D: { revenuePerEmployee: 900_000, personnelCost: 60_000, ebitdaMargin: 0.22, assetIntensity: 2.2, tangibleShare: 0.6, materialsShare: 0.55, dso: 60 },
  E: { revenuePerEmployee: 200_000, ebitdaMargin: 0.13, assetIntensity: 1.2, tangibleShare: 0.45, materialsShare: 0.25 },
  F: { revenuePerEmployee: 180_000, personnelCost: 36_000, ebitdaMargin: 0.08, assetIntensity: 1.0, tangibleShare: 0.15, materialsShare: 0.45, inventoryDays: 30, dso: 120 },
  G: { revenuePerEmployee: 400_000, personnelCost: 32_000, ebitdaMargin: 0.045, assetIntensity: 0.55, tangibleShare: 0.12, materialsShare: 0.85, inventoryDays: 45, dso: 60 },
  H: { revenuePerEmployee: 160_000, personnelCost: 38_000, ebitdaMargin: 0.07, assetIntensity: 0.75, tangibleShare: 0.35, materialsShare: 0.3, dso: 80 },
  I: { revenuePerEmployee: 70_000, personnelCost: 26_000, ebitdaMargin: 0.1, assetIntensity: 1.1, tangibleShare: 0.45, materialsShare: 0.4, inventoryDays: 10, dso: 10 },
  J: { revenuePerEmployee: 140_000, personnelCost: 50_000, ebitdaMargin: 0.14, assetIntensity: 0.8, tangibleShare: 0.08, materialsShare: 0.1, dso: 95 },
  K: { revenuePerEmployee: 700_000, personnelCost: 65_000, ebitdaMargin: 0.3, assetIntensity: 4, tangibleShare: 0.05, materialsShare: 0.05, dso: 30 },
  L: { revenuePerEmployee: 600_000, personnelCost: 40_000, ebitdaMargin: 0.45, assetIntensity: 5, tangibleShare: 0.75, materialsShare: 0.1, dso: 40 },
  M: { revenuePerEmployee: 120_000, personnelCost: 48_000, ebitdaMargin: 0.12, assetIntensity: 0.8, tangibleShare: 0.08, materialsShare: 0.1, dso: 100 },
  N: { revenuePerEmployee: 60_000, personnelCost: 27_000, ebitdaMargin: 0.08, assetIntensity: 0.6, tangibleShare: 0.15, materialsShare: 0.2, dso: 80 },
  P: { revenuePerEmployee: 70_000, personnelCost: 32_000, ebitdaMargin: 0.07, tangibleShare: 0.25 },
  Q: { revenuePerEmployee: 80_000, personnelCost: 36_000, ebitdaMargin: 0.12, assetIntensity: 0.9, tangibleShare: 0.35, materialsShare: 0.2, dso: 60 },
  R: { revenuePerEmployee: 90_000, personnelCost: 30_000, ebitdaMargin: 0.08, assetIntensity: 1.0, tangibleShare: 0.35 },
  S: { revenuePerEmployee: 60_000, personnelCost: 25_000, ebitdaMargin: 0.09, assetIntensity: 0.7, tangibleShare: 0.25, dso: 20 },
};

export function sectorProfile(section: string): SectorProfile {
  return { ...defaults, ...sectors[section] };
}

/** EU SME definition (Recommendation 2003/361/EC), decisions.md. */
export function sizeClassOf(employees: number, revenue: number, totalAssets: number): SizeClass {
  if (employees >= 250 || (revenue > 50_000_000 && totalAssets > 43_000_000)) return 'large';
  if (employees >= 50 || (revenue > 10_000_000 && totalAssets > 10_000_000)) return 'medium';
  if (employees >= 10 || (revenue > 2_000_000 && totalAssets > 2_000_000)) return 'small';
  return 'micro';
}

export interface StatementPlan {
  section: string;
  /** Ascending fiscal years. */
  years: number[];
  employees: number;
  revenue: number;
  /** Minimum share capital of the legal form (0 for a sole trader). */
  shareCapital: number;
  distressed: boolean;
  holding: boolean;
  /** Sole traders have no employees of their own beyond a few helpers. */
  maxEmployees: number;
}

export interface YearFigures {
  year: number;
  employees: number;
  size: SizeClass;
  /** Every line item and metric, by slug (zeros included). */
  values: Record<string, number>;
  /** Slugs this filer reports (abbreviated filers show fewer breakdowns). */
  reported: string[];
}

// Shown even when zero: the headline totals every filed bilancio carries.
const alwaysReported = new Set([
  'total_fixed_assets', 'total_current_assets', 'cash_and_equivalents', 'total_assets', 'share_capital', 'total_equity',
  'total_debts', 'total_liabilities', 'total_liabilities_and_equity', 'revenue', 'total_production_value', 'total_production_costs',
  'operating_result', 'profit_before_tax', 'income_taxes', 'net_income', 'ebitda',
]);
// Breakdowns that abbreviated (art. 2435-bis) and micro (art. 2435-ter) filers do not show.
const fullFilerOnly = new Set(['trade_receivables', 'bank_debts', 'trade_payables', 'days_sales_outstanding', 'net_financial_position']);
const catalogueOrder = metricCatalogue.map((m) => m.slug);

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const ratio4 = (num: number, den: number) => Math.round((num / den) * 10_000) / 10_000;

// Macro shocks common to every company: the 2020 pandemic drop and the 2021 rebound.
const yearShock: Record<number, number> = { 2009: -0.08, 2012: -0.03, 2020: -0.12, 2021: 0.1, 2022: 0.04 };

export function generateStatements(rng: Rng, plan: StatementPlan): YearFigures[] {
  const p = sectorProfile(plan.section);
  // Company traits drawn once: they persist across years as in a real business.
  const assetFactor = Math.exp(rng.normal(0, 0.3)) * (plan.holding ? 3 : 1);
  const marginBase = plan.distressed ? rng.normal(-0.04, 0.05) : rng.normal(p.ebitdaMargin, 0.04);
  const intangibleShare = 0.005 + rng.next() * 0.06;
  const tangibleShare = clamp(rng.normal(p.tangibleShare, 0.06), 0.01, 0.85);
  const financialFixedShare = plan.holding ? 0.7 + rng.next() * 0.2 : rng.chance(0.3) ? rng.next() * 0.08 : 0;
  const dso = clamp(rng.normal(p.dso, p.dso * 0.25), 3, 240);
  const dpo = clamp(rng.normal(85, 20), 20, 200);
  const provisionsShare = rng.chance(0.4) ? rng.next() * 0.03 : 0;
  const tfrFactor = 0.2 + rng.next() * 0.35;
  const payout = rng.chance(0.5) ? rng.next() * 0.6 : 0;
  const shortBankShare = 0.3 + rng.next() * 0.5;
  const hasCurrentFinancial = rng.chance(0.12);
  const unpaidCapital = plan.shareCapital > 0 && rng.chance(0.03) ? Math.round(plan.shareCapital * 0.25) : 0;
  const manufacturing = plan.section === 'C' || plan.section === 'A';
  const construction = plan.section === 'F';
  const stocksGoods = manufacturing || plan.section === 'G';

  let revenue = plan.revenue;
  let employees = plan.employees;
  let prev: Record<string, number> | undefined;
  const capital = plan.shareCapital;
  let reserves = 0;
  let retained = 0;
  const out: YearFigures[] = [];

  for (const year of plan.years) {
    if (prev) {
      const growth = (plan.distressed ? rng.normal(-0.06, 0.08) : rng.normal(0.035, 0.09)) + (yearShock[year] ?? 0);
      revenue = Math.max(5_000, Math.round(revenue * (1 + growth)));
      employees = clamp(Math.round(employees * (1 + growth * 0.6 + rng.normal(0, 0.03))), 0, plan.maxEmployees);
    }
    const v: Record<string, number> = {};

    // Income statement, value of production (A)
    v.revenue = revenue;
    v.change_in_product_inventories = manufacturing ? Math.round(revenue * rng.normal(0, 0.01)) : 0;
    v.change_in_contract_work_in_progress = construction ? Math.round(revenue * rng.normal(0, 0.02)) : 0;
    v.capitalised_own_work = employees >= 10 && rng.chance(0.15) ? Math.round(revenue * rng.next() * 0.01) : 0;
    v.other_revenues = Math.round(revenue * (0.003 + rng.next() * 0.025));
    v.total_production_value = v.revenue + v.change_in_product_inventories + v.change_in_contract_work_in_progress + v.capitalised_own_work + v.other_revenues;

    // Asset base of the year, needed for depreciation and financial items.
    const assetTarget = revenue * p.assetIntensity * assetFactor * Math.exp(rng.normal(0, 0.05));
    v.intangible_assets = Math.round(assetTarget * intangibleShare);
    v.tangible_assets = Math.round(assetTarget * tangibleShare);
    v.financial_fixed_assets = Math.round(assetTarget * financialFixedShare);

    // Costs of production (B): cash costs are set by the year's EBITDA margin, then split.
    const margin = clamp(marginBase + rng.normal(0, 0.02), -0.35, 0.6);
    const ebitdaTarget = Math.round(v.total_production_value * margin);
    const cashCosts = v.total_production_value - ebitdaTarget;
    v.personnel_costs = Math.min(Math.round(employees * p.personnelCost * Math.exp(rng.normal(0, 0.1))), Math.round(cashCosts * 0.85));
    const rest = cashCosts - v.personnel_costs;
    v.change_in_raw_materials_inventories = stocksGoods ? Math.round(rest * rng.normal(0, 0.01)) : 0;
    v.other_operating_expenses = Math.round(rest * (0.01 + rng.next() * 0.03));
    v.leases_costs = Math.round(rest * (0.03 + rng.next() * 0.07));
    v.raw_materials_costs = Math.round((rest - v.leases_costs - v.other_operating_expenses - v.change_in_raw_materials_inventories) * p.materialsShare);
    v.services_costs = rest - v.raw_materials_costs - v.leases_costs - v.other_operating_expenses - v.change_in_raw_materials_inventories;
    v.depreciation_amortisation_writedowns = Math.round(v.tangible_assets * (0.06 + rng.next() * 0.06) + v.intangible_assets * 0.2);
    v.provisions_for_risks = rng.chance(0.06) ? Math.round(revenue * rng.next() * 0.005) : 0;
    v.other_provisions = rng.chance(0.03) ? Math.round(revenue * rng.next() * 0.003) : 0;
    v.total_production_costs = v.raw_materials_costs + v.services_costs + v.leases_costs + v.personnel_costs + v.depreciation_amortisation_writedowns
      + v.change_in_raw_materials_inventories + v.provisions_for_risks + v.other_provisions + v.other_operating_expenses;
    v.operating_result = v.total_production_value - v.total_production_costs;
    v.ebitda = v.operating_result + v.depreciation_amortisation_writedowns + v.provisions_for_risks + v.other_provisions;

    // Financial items (C, D) on last year's balances.
    const cashBefore = prev?.cash_and_equivalents ?? Math.round(assetTarget * 0.08);
    const bankBefore = prev?.bank_debts ?? Math.round(assetTarget * 0.2);
    v.financial_income = Math.round(cashBefore * rng.next() * 0.01 + v.financial_fixed_assets * (plan.holding ? 0.05 + rng.next() * 0.04 : 0.01));
    v.interest_and_other_financial_charges = Math.round(bankBefore * (0.025 + rng.next() * 0.035));
    v.total_financial_income_and_charges = v.financial_income - v.interest_and_other_financial_charges;
    v.financial_value_adjustments = v.financial_fixed_assets > 0 && rng.chance(0.08) ? Math.round(v.financial_fixed_assets * rng.normal(-0.01, 0.04)) : 0;
    v.profit_before_tax = v.operating_result + v.total_financial_income_and_charges + v.financial_value_adjustments;
    // IRES 24% plus IRAP on profits; with a loss there is still IRAP on the value of production.
    v.income_taxes = v.profit_before_tax > 0
      ? Math.round(v.profit_before_tax * (0.22 + rng.next() * 0.08))
      : Math.max(0, Math.round((v.operating_result + v.personnel_costs) * 0.039 * 0.5));
    v.net_income = v.profit_before_tax - v.income_taxes;

    // Equity: last year's result is allocated (legal reserve, dividends, carried forward).
    if (prev) {
      const last = prev.net_income ?? 0;
      if (last > 0) {
        const legal = Math.round(last * 0.05);
        const dividends = Math.round(last * payout);
        reserves += legal;
        retained += last - legal - dividends;
      } else retained += last;
    } else {
      const openingEquity = Math.round(assetTarget * clamp(plan.distressed ? rng.normal(0.08, 0.06) : rng.normal(0.32, 0.12), 0.02, 0.85));
      reserves = Math.max(0, openingEquity - capital - v.net_income);
    }
    // Shareholders recapitalise a company whose equity turned negative (art. 2482-ter), unless
    // it is failing: then negative equity is the warning sign the data should show.
    if (!plan.distressed && capital + reserves + retained + v.net_income < 0) reserves += -(capital + reserves + retained + v.net_income) + Math.round(assetTarget * 0.05);
    v.share_capital = capital;
    v.reserves = reserves;
    v.retained_earnings = retained;
    v.total_equity = capital + reserves + retained + v.net_income;

    // Assets
    v.subscribed_capital_unpaid = unpaidCapital;
    v.total_fixed_assets = v.intangible_assets + v.tangible_assets + v.financial_fixed_assets;
    v.inventories = Math.round((revenue * p.inventoryDays * Math.exp(rng.normal(0, 0.2))) / 365);
    v.trade_receivables = Math.round((revenue * dso * Math.exp(rng.normal(0, 0.1))) / 365);
    v.receivables = v.trade_receivables + Math.round(v.trade_receivables * (0.08 + rng.next() * 0.25));
    v.current_financial_assets = hasCurrentFinancial ? Math.round(assetTarget * (0.01 + rng.next() * 0.04)) : 0;
    v.prepaid_expenses_and_accrued_income = Math.round(assetTarget * (0.002 + rng.next() * 0.008));
    let cash = Math.round(assetTarget * (0.03 + rng.next() * 0.1));

    // Liabilities other than bank debt
    v.provisions_for_risks_and_charges = Math.round(assetTarget * provisionsShare) + v.provisions_for_risks;
    v.employee_severance_indemnity = Math.round(v.personnel_costs * tfrFactor);
    v.accrued_expenses_and_deferred_income = Math.round(revenue * (0.001 + rng.next() * 0.005));
    v.trade_payables = Math.round(((v.raw_materials_costs + v.services_costs) * dpo) / 365);
    const otherDebts = Math.round(v.personnel_costs * 0.08 + Math.max(0, v.income_taxes) * 0.3 + revenue * (0.005 + rng.next() * 0.02));

    // Close the balance: bank debt funds the gap; a surplus sits in cash.
    const assetsBeforeCash = v.subscribed_capital_unpaid + v.total_fixed_assets + v.inventories + v.receivables + v.current_financial_assets + v.prepaid_expenses_and_accrued_income;
    const fundingOtherThanBank = v.total_equity + v.provisions_for_risks_and_charges + v.employee_severance_indemnity + v.accrued_expenses_and_deferred_income + v.trade_payables + otherDebts;
    let bank = assetsBeforeCash + cash - fundingOtherThanBank;
    if (bank < 0) {
      cash += -bank;
      bank = 0;
    }
    v.cash_and_equivalents = cash;
    v.bank_debts = bank;
    v.total_current_assets = v.inventories + v.receivables + v.current_financial_assets + v.cash_and_equivalents;
    v.total_assets = v.subscribed_capital_unpaid + v.total_fixed_assets + v.total_current_assets + v.prepaid_expenses_and_accrued_income;
    v.total_debts = v.bank_debts + v.trade_payables + otherDebts;
    v.debts_due_within_one_year = v.trade_payables + otherDebts + Math.round(v.bank_debts * shortBankShare);
    v.debts_due_beyond_one_year = v.total_debts - v.debts_due_within_one_year;
    v.total_liabilities = v.provisions_for_risks_and_charges + v.employee_severance_indemnity + v.total_debts + v.accrued_expenses_and_deferred_income;
    v.total_liabilities_and_equity = v.total_liabilities + v.total_equity;

    // Derived ratios (only where the denominator makes them meaningful).
    if (v.revenue > 0) {
      v.ebitda_margin = ratio4(v.ebitda, v.revenue);
      v.ros = ratio4(v.operating_result, v.revenue);
      v.days_sales_outstanding = Math.round((v.trade_receivables / v.revenue) * 365 * 10) / 10;
    }
    if (v.total_equity > 0) {
      v.roe = ratio4(v.net_income, v.total_equity);
      v.debt_to_equity = ratio4(v.total_debts, v.total_equity);
    }
    if (v.total_assets > 0) {
      v.roa = ratio4(v.operating_result, v.total_assets);
      v.equity_ratio = ratio4(v.total_equity, v.total_assets);
      v.asset_turnover = ratio4(v.revenue, v.total_assets);
    }
    if (v.debts_due_within_one_year > 0) {
      v.current_ratio = ratio4(v.total_current_assets, v.debts_due_within_one_year);
      v.quick_ratio = ratio4(v.total_current_assets - v.inventories, v.debts_due_within_one_year);
    }
    v.net_financial_position = v.bank_debts - v.cash_and_equivalents - v.current_financial_assets;

    const size = sizeClassOf(employees, revenue, v.total_assets);
    const abbreviated = size === 'micro' || size === 'small';
    const reported = catalogueOrder.filter((slug) => {
      const value = v[slug];
      if (value === undefined) return false;
      if (abbreviated && fullFilerOnly.has(slug)) return false;
      return value !== 0 || alwaysReported.has(slug);
    });
    out.push({ year, employees, size, values: v, reported });
    prev = v;
  }
  return out;
}
