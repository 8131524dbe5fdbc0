import { z } from 'zod';
import { AppError } from '../errors/index.js';
import type { MetricDefinitions } from './read-metric-definitions.js';
import type { CompanyHistory } from './assemble-company-report.js';
import { analysisRatios, growthFigures } from './company-analysis.js';
import { fiscalCodeRefusal } from './identifier-hints.js';
import { fiscalCodePattern, metricCategoryValues } from './schemas/index.js';
import { editDistance } from '../text/index.js';

// Chosen line items of a company across chosen years, as series (one entry per metric, one
// value per year). Selected from the company report's financials, so every figure is exactly
// the one the report endpoint returns, previousValue and yoyChange included.

const SLUG = /^[a-z0-9_]+$/;

// No metric slug is that long (the longest has 36 characters).
const SLUG_MAX = 100;

/**
 * A slug written as a model may write it (netIncome, EBITDAMargin, Net Income, net-income): its
 * snake_case form said. Not for one in capitals alone (NETINCOME), whose words cannot be told.
 */
function slugShapeRefusal(input: unknown): string {
  const refusal = 'a lower snake_case metric slug';
  if (typeof input !== 'string' || input.length > SLUG_MAX || /^[A-Z0-9]+$/.test(input.trim())) return refusal;
  const snake = input.trim().replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2').replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/[\s-]+/g, '_').toLowerCase();
  return SLUG.test(snake) ? `${refusal}: ${snake}, not ${input}` : refusal;
}

export const companyMetricsInputSchema = z.strictObject({
  fiscalCode: z.string().trim().regex(fiscalCodePattern, { error: (issue) => fiscalCodeRefusal(issue.input) })
    .describe('The company\'s fiscal code: 11 digits or 16 characters (case-insensitive).'),
  // A slug is short: a longer one is refused as such, not quoted back (80 slugs of 3,000 letters
  // were a 488 KB refusal, each quoted in the message, its detail and the text).
  slugs: z.array(z.string().max(SLUG_MAX, { error: `at most ${SLUG_MAX} characters: no metric slug is longer`, abort: true })
    .regex(SLUG, { error: (issue) => slugShapeRefusal(issue.input) })).min(1).max(80).optional()
    .describe('Metric slugs, e.g. ["revenue", "net_income", "total_equity", "ebitda_margin"].'),
  categories: z.array(z.enum(metricCategoryValues)).min(1).optional()
    .describe('Metric categories; a metric is returned when it is in any of them. Combined with slugs as a union. Omit both for every metric.'),
  years: z.array(z.number().int().min(1900).max(2100)).min(1).max(10).optional()
    .describe('Fiscal years to include (up to 10, any on file); omit for the 10 newest (filed ones, or any with includeForecasts).'),
  includeForecasts: z.boolean().default(false).describe('Include forecast years (isForecasted true).'),
});

export const metricValueSchema = z.strictObject({
  year: z.number().int(),
  isForecasted: z.boolean(),
  value: z.number(),
  previousValue: z.number().nullable().describe('The value of the year before; null when not on file, or when this year is filed and the year before is a forecast (a filed figure is never compared with a forecast).'),
  yoyChange: z.number().nullable().describe('Relative change on the year before, (value - previousValue) / |previousValue|, as a fraction (0.12 = +12%). For a ratio it is not the change in points: ebitda_margin 0.33 to 0.317 is -0.0394, a fall of 3.9%, or 1.3 points.'),
  marketValue: z.number().nullable().describe('Market reference value of the item, as supplied with the company data; null when none.'),
  score: z.number().nullable().describe('Score of the item, as supplied with the company data; null when none.'),
});

export const metricSeriesSchema = z.strictObject({
  slug: z.string(),
  name: z.string(),
  categories: z.array(z.enum(metricCategoryValues)),
  unit: z.string().nullable().describe('Unit of the values: EUR for amounts in euro, ratio for fractions (0.12 = 12%), days for durations; null when none is given.'),
  values: z.array(metricValueSchema).describe('Newest year first; years where the metric is not reported are absent.'),
});

export const companyMetricsSchema = z.strictObject({
  company: z.strictObject({ fiscalCode: z.string().nullable(), legalName: z.string().nullable() }),
  years: z.array(z.number().int()).describe('The years covered, newest first.'),
  availableYears: z.array(z.number().int()).describe('Every year on file for this company, newest first, forecasts included (see forecastYears).'),
  forecastYears: z.array(z.number().int()).describe('The years of availableYears that are forecasts: covered only with includeForecasts.'),
  metrics: z.array(metricSeriesSchema),
  missingSlugs: z.array(z.string()).describe('Requested slugs (each a defined metric: others are refused) not reported in any of the covered years; empty when no year is covered (see missingYears).'),
  missingYears: z.array(z.number().int()).describe('Requested years not covered: not on file for this company, or forecasts asked without includeForecasts.'),
});

export type CompanyMetricsInput = z.output<typeof companyMetricsInputSchema>;
export type CompanyMetrics = z.infer<typeof companyMetricsSchema>;
type MetricSeries = z.infer<typeof metricSeriesSchema>;

/** Years a call covers at most: those it names (up to 10), or else the newest 10. */
export const MAX_METRIC_YEARS = 10;

/**
 * The series asked for, from a company's years newest first: its report (when that holds every
 * year on file) or its whole history (CompanyStore.companyHistory).
 */
export function selectCompanyMetrics(report: CompanyHistory, input: CompanyMetricsInput): CompanyMetrics {
  const availableYears = report.financials.map((f) => f.year);
  const years = report.financials
    .filter((f) => (input.includeForecasts || !f.isForecasted) && (input.years === undefined || input.years.includes(f.year)))
    .slice(0, MAX_METRIC_YEARS);
  const slugs = input.slugs ? new Set(input.slugs) : undefined;
  const categories = input.categories ? new Set<string>(input.categories) : undefined;
  const wanted = (slug: string, cats: string[]) =>
    (slugs === undefined && categories === undefined) || slugs?.has(slug) === true || (categories !== undefined && cats.some((c) => categories.has(c)));

  // Map keeps first-seen order: the report's (statutory) order of line items.
  const series = new Map<string, MetricSeries>();
  for (const y of years) {
    for (const m of y.metrics) {
      if (!wanted(m.slug, m.categories)) continue;
      let s = series.get(m.slug);
      if (!s) {
        s = { slug: m.slug, name: m.name, categories: m.categories, unit: m.unit, values: [] };
        series.set(m.slug, s);
      }
      s.values.push({ year: y.year, isForecasted: y.isForecasted, value: m.value, previousValue: m.previousValue, yoyChange: m.yoyChange, marketValue: m.marketValue, score: m.score });
    }
  }
  return {
    company: { fiscalCode: report.identity.fiscalCode, legalName: report.identity.legalName },
    years: years.map((y) => y.year),
    availableYears,
    forecastYears: report.financials.filter((f) => f.isForecasted).map((f) => f.year),
    metrics: [...series.values()],
    // Only of the years covered: with none (a year not on file), nothing was looked at, and a
    // slug listed here would read as a figure the company does not report.
    missingSlugs: input.slugs && years.length > 0 ? input.slugs.filter((s) => !series.has(s)) : [],
    // Said, not left to be inferred from `years`: a model that asked for a forecast year without
    // includeForecasts, or a year the company never filed, would otherwise read an empty answer
    // as "no figures" and not know what to ask instead.
    missingYears: input.years ? input.years.filter((y) => !years.some((f) => f.year === y)) : [],
  };
}

/**
 * The refusal of a request that names a slug no metric has (a typo, a guess, a ratio of the
 * company analysis): invalid_params (not billed), naming each such slug with the nearest defined
 * ones, or the metrics an analysis ratio is computed from. Refused even beside known slugs or
 * categories: answered, it would list the slug in `missingSlugs`, which says the company did not
 * report it, and a model told the user the data was missing (net_margin, an analysis ratio).
 * null when every slug is defined.
 */
export function unknownMetricSlugs(input: Pick<CompanyMetricsInput, 'slugs' | 'categories'>, defined: MetricDefinitions): AppError | null {
  const unknown = (input.slugs ?? []).map((slug, i) => ({ slug, i })).filter(({ slug }) => !defined.has(slug));
  if (unknown.length === 0) return null;
  const details = unknown.map(({ slug, i }) => ({ path: `slugs.${i}`, message: `no metric has this slug${notAMetric(slug) ?? nearestSaid(slug, defined)}` }));
  const named = unknown.length === 1 ? `the slug ${unknown[0]!.slug}` : `any of the slugs ${unknown.map((u) => u.slug).join(', ')}`;
  return new AppError('invalid_params', `No metric has ${named}. Name metrics by their slugs (e.g. revenue, ebitda, net_income, total_equity) or ask by categories.`, { details });
}

/**
 * Where a figure asked for as a slug is to be had instead, when the analysis gives it (its ratios
 * and growth figures, which a model reads there and asks for here) or it is the headcount: the
 * tool, the formula and the metrics it is computed from; undefined for any other slug.
 */
function notAMetric(slug: string): string | undefined {
  const headcount = 'the headcount is not a metric: the profile\'s latest year has employees, and service_analyze_company its growth (employees_growth)';
  if (slug === 'employees') return `: ${headcount}`;
  const ratio = analysisRatios.find((r) => r.key === slug);
  if (ratio) {
    // The analysis computes it from its inputs; the data may supply it as net_financial_position.
    const supplied = slug === 'net_financial_debt' ? '; or ask for net_financial_position, the same figure as the company data supplies it' : '';
    return `: service_analyze_company computes it (${ratio.formula}); ask here for ${ratio.slugs.join(', ')}${supplied}`;
  }
  const growth = growthFigures.find((g) => g.key === slug) ?? (slug === 'revenue_cagr' ? { slug: 'revenue' } : undefined);
  if (growth) return growth.slug === 'employees' ? `: ${headcount}` : `: service_analyze_company computes it from ${growth.slug}; ask here for ${growth.slug}, whose yoyChange is the change on the year before`;
  return undefined;
}

const nearestSaid = (slug: string, defined: MetricDefinitions) => {
  const near = nearestSlugs(slug, defined);
  return near.length > 0 ? `; did you mean ${near.join(' or ')}?` : '';
};

/** Up to three defined slugs within a third of the slug's length in edits, nearest first. */
function nearestSlugs(slug: string, defined: MetricDefinitions): string[] {
  const limit = Math.max(1, Math.floor(slug.length / 3));
  return [...defined.keys()]
    .map((candidate) => ({ candidate, distance: editDistance(slug, candidate, limit) }))
    .filter((c) => c.distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map((c) => c.candidate);
}
