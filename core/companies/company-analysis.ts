import { z } from 'zod';
import { runStoreQuery } from './run-store-query.js';
import { fiscalCodeRefusal } from './identifier-hints.js';
import { fiscalCodePattern, sizeValues, stateAidsSchema, type CompanyReportData } from './schemas/index.js';
import type { CompanyQueryDeps } from './search-companies.js';
import { round4 } from './derive-year-figures.js';

// A company analysis computed from its filed figures and nothing else: each figure names its
// formula and the reported inputs (metric slug, year, value) it came from, so a reader can
// check every number against the company report. A figure whose inputs are missing, or whose
// denominator is zero or negative, is null with a note saying why, never estimated.

export const ANALYSIS_YEARS = 5;
export const MAX_PEERS_COMPARED = 5_000;

export const companyAnalysisInputSchema = z.strictObject({
  fiscalCode: z.string().trim().regex(fiscalCodePattern, { error: (issue) => fiscalCodeRefusal(issue.input) })
    .describe('The company\'s fiscal code: 11 digits or 16 characters (case-insensitive).'),
});

const inputRefSchema = z.strictObject({
  slug: z.string().describe('Metric slug as in the company report (employees: the year\'s headcount; state_aids.*: the state aids object).'),
  year: z.number().int(),
  value: z.number().nullable(),
});

export const figureSchema = z.strictObject({
  key: z.string(),
  name: z.string(),
  year: z.number().int().nullable().describe('Fiscal year the figure refers to.'),
  value: z.number().nullable().describe('null when it cannot be computed; see note.'),
  unit: z.enum(['ratio', 'EUR', 'days']).describe('ratio: a fraction (0.12 = 12%).'),
  formula: z.string(),
  inputs: z.array(inputRefSchema).describe('The reported figures the value was computed from.'),
  note: z.string().nullable(),
});

const trendValues = ['improving', 'deteriorating', 'stable', 'insufficient_data'] as const;
export const ratioSchema = figureSchema.extend({
  higherIsBetter: z.boolean(),
  history: z.array(z.strictObject({ year: z.number().int(), value: z.number().nullable() })).describe('The same ratio for each analysed year, newest first.'),
  trend: z.enum(trendValues).describe('Oldest to newest computable value: a change under 5% is stable, whatever the years between did (read history for a recent fall).'),
});

export const riskFlagSchema = z.strictObject({
  code: z.string(),
  severity: z.enum(['high', 'medium', 'low']),
  source: z.enum(['registry', 'financials']),
  description: z.string(),
  inputs: z.array(inputRefSchema),
});

export const peerComparisonSchema = z.strictObject({
  key: z.string(),
  name: z.string(),
  value: z.number().nullable().describe("The company's own value (latest filed year)."),
  percentile: z.number().min(0).max(1).nullable().describe('Share of peers with a lower value, ties counting half: 0.9 = above 90% of peers.'),
  peerMedian: z.number().nullable(),
  peersCompared: z.number().int().describe('Peers with a computable value.'),
});

export const companyAnalysisSchema = z.strictObject({
  company: z.strictObject({
    fiscalCode: z.string().nullable(),
    legalName: z.string().nullable(),
    naceCode: z.string().nullable(),
    size: z.enum(sizeValues).nullable(),
    latestFiledYear: z.number().int().nullable(),
    dissolutionYear: z.number().int().nullable(),
    isConsolidated: z.boolean(),
  }),
  yearsAnalysed: z.array(z.number().int()).describe(`Filed (not forecast) years used, newest first, at most ${ANALYSIS_YEARS}.`),
  profitability: z.array(ratioSchema),
  growth: z.array(figureSchema),
  liquidity: z.array(ratioSchema),
  solvency: z.array(ratioSchema),
  riskFlags: z.array(riskFlagSchema).describe('Registry risk indicators that are set, and warning signs computed from the figures.'),
  unknownRiskIndicators: z.array(z.string()).describe('Registry risk indicators the service has no information on.'),
  stateAids: stateAidsSchema.extend({ shareOfLatestRevenue: figureSchema.nullable() }).nullable(),
  peers: z.strictObject({
    naceDivision: z.string(),
    peerCount: z.number().int().describe(`Active companies (no dissolution recorded) of the same NACE division with filed figures, each compared by its latest filed year (at most ${MAX_PEERS_COMPARED} compared).`),
    comparisons: z.array(peerComparisonSchema),
  }).nullable().describe('Standing within the NACE division; null when the NACE code is unknown.'),
});

export type CompanyAnalysis = z.infer<typeof companyAnalysisSchema>;
type Figure = z.infer<typeof figureSchema>;
type Ratio = z.infer<typeof ratioSchema>;
type InputRef = z.infer<typeof inputRefSchema>;
type RiskFlag = z.infer<typeof riskFlagSchema>;

/** One analysed year: its metric values by slug, plus headcount under the pseudo-slug `employees`. */
interface YearValues {
  year: number;
  values: Map<string, number>;
}

interface RatioDefinition {
  key: string;
  name: string;
  unit: Figure['unit'];
  higherIsBetter: boolean;
  formula: string;
  slugs: string[];
  /** Inputs that count as zero when not reported (a line most companies leave out), as the report's own derived lines count them. */
  zeroWhenMissing?: string[];
  /** null when the ratio is not meaningful for these values (e.g. a zero or negative base). */
  compute(v: (slug: string) => number): number | null;
}

const positive = (x: number) => x > 0;
const netFinancialDebt = (v: (slug: string) => number) => v('bank_debts') - v('cash_and_equivalents') - v('current_financial_assets');
const divide = (a: number, b: number) => (positive(b) ? a / b : null);

export const profitabilityRatios: RatioDefinition[] = [
  { key: 'ebitda_margin', name: 'EBITDA margin', unit: 'ratio', higherIsBetter: true, formula: 'ebitda / revenue', slugs: ['ebitda', 'revenue'], compute: (v) => divide(v('ebitda'), v('revenue')) },
  { key: 'net_margin', name: 'Net profit margin', unit: 'ratio', higherIsBetter: true, formula: 'net_income / revenue', slugs: ['net_income', 'revenue'], compute: (v) => divide(v('net_income'), v('revenue')) },
  { key: 'roe', name: 'Return on equity', unit: 'ratio', higherIsBetter: true, formula: 'net_income / total_equity (equity > 0)', slugs: ['net_income', 'total_equity'], compute: (v) => divide(v('net_income'), v('total_equity')) },
  { key: 'roa', name: 'Return on assets', unit: 'ratio', higherIsBetter: true, formula: 'operating_result / total_assets', slugs: ['operating_result', 'total_assets'], compute: (v) => divide(v('operating_result'), v('total_assets')) },
  { key: 'asset_turnover', name: 'Asset turnover', unit: 'ratio', higherIsBetter: true, formula: 'revenue / total_assets', slugs: ['revenue', 'total_assets'], compute: (v) => divide(v('revenue'), v('total_assets')) },
];

export const liquidityRatios: RatioDefinition[] = [
  { key: 'current_ratio', name: 'Current ratio', unit: 'ratio', higherIsBetter: true, formula: 'total_current_assets / debts_due_within_one_year', slugs: ['total_current_assets', 'debts_due_within_one_year'], compute: (v) => divide(v('total_current_assets'), v('debts_due_within_one_year')) },
  { key: 'quick_ratio', name: 'Quick ratio', unit: 'ratio', higherIsBetter: true, formula: '(total_current_assets - inventories) / debts_due_within_one_year', slugs: ['total_current_assets', 'inventories', 'debts_due_within_one_year'], compute: (v) => divide(v('total_current_assets') - v('inventories'), v('debts_due_within_one_year')) },
  { key: 'cash_ratio', name: 'Cash ratio', unit: 'ratio', higherIsBetter: true, formula: 'cash_and_equivalents / debts_due_within_one_year', slugs: ['cash_and_equivalents', 'debts_due_within_one_year'], compute: (v) => divide(v('cash_and_equivalents'), v('debts_due_within_one_year')) },
];

export const solvencyRatios: RatioDefinition[] = [
  { key: 'equity_ratio', name: 'Equity ratio', unit: 'ratio', higherIsBetter: true, formula: 'total_equity / total_assets', slugs: ['total_equity', 'total_assets'], compute: (v) => divide(v('total_equity'), v('total_assets')) },
  { key: 'debt_to_equity', name: 'Debt to equity', unit: 'ratio', higherIsBetter: false, formula: 'total_debts / total_equity (equity > 0)', slugs: ['total_debts', 'total_equity'], compute: (v) => divide(v('total_debts'), v('total_equity')) },
  // The metric catalogue's net_financial_position, which the report serves: one definition.
  // Current financial assets are a line few companies fill: missing, they count as none (and
  // the figure's note says so), or the figure would be unknown for most companies.
  { key: 'net_financial_debt', name: 'Net financial debt', unit: 'EUR', higherIsBetter: false, formula: 'bank_debts - cash_and_equivalents - current_financial_assets', slugs: ['bank_debts', 'cash_and_equivalents', 'current_financial_assets'], zeroWhenMissing: ['current_financial_assets'], compute: netFinancialDebt },
  { key: 'net_debt_to_ebitda', name: 'Net financial debt to EBITDA', unit: 'ratio', higherIsBetter: false, formula: '(bank_debts - cash_and_equivalents - current_financial_assets) / ebitda (ebitda > 0)', slugs: ['bank_debts', 'cash_and_equivalents', 'current_financial_assets', 'ebitda'], zeroWhenMissing: ['current_financial_assets'], compute: (v) => divide(netFinancialDebt(v), v('ebitda')) },
  { key: 'interest_coverage', name: 'Interest coverage', unit: 'ratio', higherIsBetter: true, formula: 'ebitda / |interest_and_other_financial_charges|', slugs: ['ebitda', 'interest_and_other_financial_charges'], compute: (v) => divide(v('ebitda'), Math.abs(v('interest_and_other_financial_charges'))) },
];

/** Every ratio the analysis computes, for the metrics tool to name when asked for one as a slug. */
export const analysisRatios: readonly RatioDefinition[] = [...profitabilityRatios, ...liquidityRatios, ...solvencyRatios];

// Halves away from zero, as the report's changes (round4): a loss rounds as the same profit does.
const roundFigure = (x: number, unit: Figure['unit']) => (unit === 'EUR' ? Math.sign(x) * Math.round(Math.abs(x)) : round4(x));

function yearValues(report: CompanyReportData): YearValues[] {
  return report.financials
    .filter((f) => !f.isForecasted)
    .slice(0, ANALYSIS_YEARS)
    .map((f) => {
      const values = new Map(f.metrics.map((m) => [m.slug, m.value]));
      if (f.employees !== null) values.set('employees', f.employees);
      return { year: f.year, values };
    });
}

function computeRatio(def: RatioDefinition, y: YearValues): Figure {
  const inputs: InputRef[] = def.slugs.map((slug) => ({ slug, year: y.year, value: y.values.get(slug) ?? null }));
  const zero = new Set(def.zeroWhenMissing ?? []);
  const missing = inputs.filter((i) => i.value === null && !zero.has(i.slug)).map((i) => i.slug);
  const base = { key: def.key, name: def.name, year: y.year, unit: def.unit, formula: def.formula, inputs };
  if (missing.length > 0) return { ...base, value: null, note: `Not computable: ${missing.join(', ')} not reported for ${y.year}.` };
  const value = def.compute((slug) => y.values.get(slug) ?? 0);
  if (value === null || !Number.isFinite(value)) return { ...base, value: null, note: 'Not meaningful: the denominator is zero or negative.' };
  const zeroed = inputs.filter((i) => i.value === null).map((i) => i.slug);
  return { ...base, value: roundFigure(value, def.unit), note: zeroed.length > 0 ? `${zeroed.join(', ')} not reported for ${y.year}: counted as 0.` : null };
}

function trendOf(history: { value: number | null }[], higherIsBetter: boolean): Ratio['trend'] {
  const known = history.filter((h): h is { value: number } => h.value !== null);
  const newest = known[0];
  const oldest = known[known.length - 1];
  if (known.length < 2 || newest === undefined || oldest === undefined) return 'insufficient_data';
  const scale = Math.abs(oldest.value) || Math.abs(newest.value) || 1;
  const change = (newest.value - oldest.value) / scale;
  if (Math.abs(change) < 0.05) return 'stable';
  return change > 0 === higherIsBetter ? 'improving' : 'deteriorating';
}

function ratioWithTrend(def: RatioDefinition, years: YearValues[]): Ratio | null {
  const latest = years[0];
  if (!latest) return null;
  const history = years.map((y) => ({ year: y.year, value: computeRatio(def, y).value }));
  return { ...computeRatio(def, latest), higherIsBetter: def.higherIsBetter, history, trend: trendOf(history, def.higherIsBetter) };
}

/** Change from the year before (year - 1 exactly: a gap in filings gives no comparison). */
/**
 * The year-on-year figures the analysis gives, each of one input (`employees` the headcount, the
 * others metric slugs); with the compound growth of revenue (`revenue_cagr`) after the first.
 */
export const growthFigures = [
  { key: 'revenue_growth', name: 'Revenue growth on the previous year', slug: 'revenue' },
  { key: 'net_income_change', name: 'Net income change on the previous year', slug: 'net_income' },
  { key: 'total_assets_growth', name: 'Total assets growth on the previous year', slug: 'total_assets' },
  { key: 'equity_growth', name: 'Equity growth on the previous year', slug: 'total_equity' },
  { key: 'employees_growth', name: 'Headcount growth on the previous year', slug: 'employees' },
] as const;

function yearOnYear({ key, name, slug }: (typeof growthFigures)[number], years: YearValues[]): Figure | null {
  const latest = years[0];
  if (!latest) return null;
  const previous = years.find((y) => y.year === latest.year - 1);
  const now = latest.values.get(slug) ?? null;
  const before = previous?.values.get(slug) ?? null;
  const inputs: InputRef[] = [{ slug, year: latest.year, value: now }, { slug, year: latest.year - 1, value: before }];
  const base = { key, name, year: latest.year, unit: 'ratio' as const, formula: `(${slug}[year] - ${slug}[year - 1]) / |${slug}[year - 1]|`, inputs };
  if (now === null || before === null) return { ...base, value: null, note: `Not computable: ${slug} is not reported for both ${latest.year} and ${latest.year - 1}.` };
  if (before === 0) return { ...base, value: null, note: 'Not meaningful: the previous year is zero.' };
  return { ...base, value: round4((now - before) / Math.abs(before)), note: null };
}

function compoundGrowth(slug: string, years: YearValues[]): Figure | null {
  const latest = years[0];
  const oldest = years[years.length - 1];
  if (!latest || !oldest) return null;
  const span = latest.year - oldest.year;
  const now = latest.values.get(slug) ?? null;
  const then = oldest.values.get(slug) ?? null;
  const base = {
    key: `${slug}_cagr`, name: `Compound annual growth of ${slug}`, year: latest.year, unit: 'ratio' as const,
    formula: `(${slug}[${latest.year}] / ${slug}[${oldest.year}])^(1/${span}) - 1`,
    inputs: [{ slug, year: latest.year, value: now }, { slug, year: oldest.year, value: then }],
  };
  if (span < 1) return { ...base, value: null, note: 'Not computable: fewer than two filed years.' };
  if (now === null || then === null) return { ...base, value: null, note: `Not computable: ${slug} is not reported for both years.` };
  if (!(now > 0 && then > 0)) return { ...base, value: null, note: 'Not meaningful: growth between non-positive values.' };
  return { ...base, value: round4((now / then) ** (1 / span) - 1), note: null };
}

function riskFlags(report: CompanyReportData, years: YearValues[], ratios: Map<string, Figure>, asOf: Date): RiskFlag[] {
  const flags: RiskFlag[] = [];
  const registry: [keyof CompanyReportData['risk'], string, RiskFlag['severity'], string][] = [
    ['protestsOfBill', 'protests_of_bill', 'high', 'Protested bills or cheques are registered against the company.'],
    ['insolvencyProceedings', 'insolvency_proceedings', 'high', 'Insolvency proceedings are registered.'],
    ['insolvencyApplications', 'insolvency_applications', 'high', 'Applications for insolvency proceedings are registered.'],
    ['assetEncumbrances', 'asset_encumbrances', 'medium', 'Encumbrances (mortgages, liens) on assets are registered.'],
    ['officersWithRiskIndicators', 'officers_with_risk_indicators', 'medium', 'Some officers carry risk indicators of their own.'],
  ];
  for (const [field, code, severity, description] of registry) {
    if (report.risk[field] === true) flags.push({ code, severity, source: 'registry', description, inputs: [] });
  }
  if (report.identity.dissolutionYear !== null) {
    flags.push({ code: 'dissolved', severity: 'high', source: 'registry', description: `The company was dissolved in ${report.identity.dissolutionYear}.`, inputs: [] });
  }

  const latest = years[0];
  if (latest === undefined) {
    flags.push({ code: 'no_filed_figures', severity: 'low', source: 'financials', description: 'No filed financial statements are on record.', inputs: [] });
    return flags;
  }
  const ref = (slug: string, y: YearValues): InputRef => ({ slug, year: y.year, value: y.values.get(slug) ?? null });
  const equity = latest.values.get('total_equity');
  if (equity !== undefined && equity < 0) {
    flags.push({ code: 'negative_equity', severity: 'high', source: 'financials', description: `Shareholders' equity is negative in ${latest.year}.`, inputs: [ref('total_equity', latest)] });
  }
  const lossYears: YearValues[] = [];
  for (const y of years) {
    const expected = (lossYears[lossYears.length - 1]?.year ?? y.year + 1) - 1;
    const income = y.values.get('net_income');
    if (y.year !== expected || income === undefined || income >= 0) break;
    lossYears.push(y);
  }
  if (lossYears.length >= 2) {
    flags.push({ code: 'consecutive_losses', severity: 'high', source: 'financials', description: `Net losses in each of the last ${lossYears.length} years.`, inputs: lossYears.map((y) => ref('net_income', y)) });
  } else if (lossYears.length === 1) {
    flags.push({ code: 'net_loss', severity: 'medium', source: 'financials', description: `Net loss in ${latest.year}.`, inputs: [ref('net_income', latest)] });
  }
  const threshold = (key: string, test: (v: number) => boolean, code: string, severity: RiskFlag['severity'], description: (v: number) => string) => {
    const f = ratios.get(key);
    if (f && f.value !== null && test(f.value)) flags.push({ code, severity, source: 'financials', description: description(f.value), inputs: f.inputs });
  };
  threshold('revenue_growth', (v) => v < -0.2, 'revenue_decline', 'medium', (v) => `Revenue fell ${Math.round(-v * 100)}% on the previous year.`);
  threshold('current_ratio', (v) => v < 1, 'weak_liquidity', 'medium', (v) => `Current ratio ${v.toFixed(2)}: short-term debts exceed current assets.`);
  threshold('interest_coverage', (v) => v < 1.5, 'weak_interest_coverage', 'medium', (v) => `EBITDA covers financial charges only ${v.toFixed(2)} times.`);
  threshold('debt_to_equity', (v) => v > 4, 'high_leverage', 'medium', (v) => `Debts are ${v.toFixed(1)} times equity.`);
  if (report.latestFiledYear !== null && report.latestFiledYear < asOf.getUTCFullYear() - 2) {
    flags.push({ code: 'stale_filings', severity: 'low', source: 'financials', description: `The latest filed statement is for ${report.latestFiledYear}.`, inputs: [] });
  }
  return flags;
}

/** Peer figures for one NACE division, as loadPeerFigures reads them. */
export interface PeerFigures {
  naceDivision: string;
  peerCount: number;
  /** Each peer's latest filed year: metric values by slug, plus `employees`. */
  peers: Map<string, number>[];
}

const peerMetrics: { key: string; name: string; own: (y: YearValues, ratios: Map<string, Figure>) => number | null; peer: (v: Map<string, number>) => number | null }[] = [
  { key: 'revenue', name: 'Revenue', own: (y) => y.values.get('revenue') ?? null, peer: (v) => v.get('revenue') ?? null },
  { key: 'total_assets', name: 'Total assets', own: (y) => y.values.get('total_assets') ?? null, peer: (v) => v.get('total_assets') ?? null },
  { key: 'employees', name: 'Employees', own: (y) => y.values.get('employees') ?? null, peer: (v) => v.get('employees') ?? null },
  ...[...profitabilityRatios.filter((d) => d.key !== 'asset_turnover'), liquidityRatios[0]!, solvencyRatios[0]!].map((def) => ({
    key: def.key,
    name: def.name,
    own: (_y: YearValues, ratios: Map<string, Figure>) => ratios.get(def.key)?.value ?? null,
    peer: (v: Map<string, number>) => computeRatio(def, { year: 0, values: v }).value,
  })),
];

/** Every metric slug peerStanding reads from a peer's year. */
export const peerMetricSlugs = [...new Set(['revenue', 'total_assets', ...profitabilityRatios.flatMap((d) => d.slugs), ...liquidityRatios[0]!.slugs, ...solvencyRatios[0]!.slugs])];

function percentile(own: number, values: number[]): number {
  let below = 0;
  let equal = 0;
  for (const v of values) {
    if (v < own) below++;
    else if (v === own) equal++;
  }
  return round4((below + equal / 2) / values.length);
}

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const m = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Number.isInteger(m) ? m : round4(m);
}

export interface AnalyzeOptions {
  peers: PeerFigures | null;
  /** "Now" for staleness checks; a parameter so results are reproducible. */
  asOf?: Date;
}

export function analyzeCompany(report: CompanyReportData, options: AnalyzeOptions): CompanyAnalysis {
  const years = yearValues(report);
  const latest = years[0];
  const ratioList = (defs: RatioDefinition[]) => defs.map((d) => ratioWithTrend(d, years)).filter((r): r is Ratio => r !== null);
  const profitability = ratioList(profitabilityRatios);
  const liquidity = ratioList(liquidityRatios);
  const solvency = ratioList(solvencyRatios);
  const growth = [
    yearOnYear(growthFigures[0]!, years),
    compoundGrowth('revenue', years),
    ...growthFigures.slice(1).map((g) => yearOnYear(g, years)),
  ].filter((f): f is Figure => f !== null);
  const byKey = new Map<string, Figure>([...profitability, ...liquidity, ...solvency, ...growth].map((f) => [f.key, f]));

  const unknownRiskIndicators = Object.entries(report.risk).filter(([, v]) => v === null).map(([k]) => k);
  let stateAids: CompanyAnalysis['stateAids'] = null;
  if (report.stateAids !== null) {
    const amount = report.stateAids.amountLast36Months;
    const revenue = latest?.values.get('revenue') ?? null;
    const share: Figure | null = latest === undefined ? null : {
      key: 'state_aids_share_of_revenue', name: 'State aids of the last 36 months relative to latest revenue', year: latest.year, unit: 'ratio',
      formula: 'stateAids.amountLast36Months / revenue',
      inputs: [{ slug: 'state_aids.amount_last_36_months', year: latest.year, value: amount }, { slug: 'revenue', year: latest.year, value: revenue }],
      value: amount !== null && revenue !== null && revenue > 0 ? round4(amount / revenue) : null,
      note: amount !== null && revenue !== null && revenue > 0 ? null : 'Not computable: the amount or a positive revenue is missing.',
    };
    stateAids = { ...report.stateAids, shareOfLatestRevenue: share };
  }

  let peers: CompanyAnalysis['peers'] = null;
  if (options.peers !== null) {
    const comparisons = peerMetrics.map((m) => {
      const own = latest ? m.own(latest, byKey) : null;
      const values = options.peers!.peers.map(m.peer).filter((v): v is number => v !== null && Number.isFinite(v));
      return {
        key: m.key, name: m.name, value: own,
        percentile: own === null || values.length === 0 ? null : percentile(own, values),
        peerMedian: median(values),
        peersCompared: values.length,
      };
    });
    peers = { naceDivision: options.peers.naceDivision, peerCount: options.peers.peerCount, comparisons };
  }

  return {
    company: {
      fiscalCode: report.identity.fiscalCode,
      legalName: report.identity.legalName,
      naceCode: report.identity.naceCode,
      size: report.latest?.size ?? null,
      latestFiledYear: report.latestFiledYear,
      dissolutionYear: report.identity.dissolutionYear,
      isConsolidated: report.isConsolidated,
    },
    yearsAnalysed: years.map((y) => y.year),
    profitability,
    growth,
    liquidity,
    solvency,
    riskFlags: riskFlags(report, years, byKey, options.asOf ?? new Date()),
    unknownRiskIndicators,
    stateAids,
    peers,
  };
}

interface PeerRow {
  employees: number | null;
  v: Record<string, number> | null;
}

/**
 * The latest filed figures of the company's NACE division peers (itself excluded): active ones
 * only, as a dissolved company's last filing, years old, is no standard for a sector now. null
 * when the NACE code is unknown. Bounded to MAX_PEERS_COMPARED peers so a huge division stays cheap.
 */
export async function loadPeerFigures(deps: CompanyQueryDeps, company: { fiscalCode: string; naceCode: string | null }): Promise<PeerFigures | null> {
  if (company.naceCode === null || company.naceCode.length < 2) return null;
  const division = company.naceCode.slice(0, 2);
  const sql = `
SELECT
  (SELECT count(*)::int FROM companies WHERE substring(nace_code from 1 for 2) = :division AND fiscal_code <> :fiscalCode AND latest_filed_year IS NOT NULL
     AND dissolution_year IS NULL) AS peer_count,
  (SELECT json_agg(p) FROM (
     SELECT y.employees,
            (SELECT jsonb_object_agg(m->>0, (m->>1)::float8) FROM json_array_elements(y.metrics) m WHERE m->>0 = ANY(:slugs::text[])) AS v
     FROM companies c JOIN company_years y ON y.company_id = c.id AND y.year = c.latest_filed_year
     WHERE substring(c.nace_code from 1 for 2) = :division AND c.fiscal_code <> :fiscalCode AND c.dissolution_year IS NULL
     ORDER BY c.id LIMIT :limit
  ) p) AS peers`;
  const result = await runStoreQuery(deps, 'company peers for analysis', deps.db.raw<{ rows: { peer_count: number; peers: PeerRow[] | null }[] }>(sql, {
    division, fiscalCode: company.fiscalCode, slugs: peerMetricSlugs, limit: MAX_PEERS_COMPARED,
  }));
  const row = result.rows[0];
  return {
    naceDivision: division,
    peerCount: row?.peer_count ?? 0,
    peers: (row?.peers ?? []).map((p) => {
      const values = new Map(Object.entries(p.v ?? {}));
      if (p.employees !== null) values.set('employees', p.employees);
      return values;
    }),
  };
}
