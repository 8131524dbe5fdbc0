import { classifyCompanySize, type CompanySize, type SizeFigures } from './company-size.js';
import type { DossierYear } from './schemas/index.js';

// Metric slugs the store relies on (they are in the metric catalogue): the profile's size rule
// and peer ordering read them from the latest filed year.
export const REVENUE_SLUG = 'revenue';
export const TOTAL_ASSETS_SLUG = 'total_assets';

/**
 * One line item as stored. Only slug and value are always there: previousValue and yoyChange
 * are stored only when they differ from what the year before gives (see metricChanges),
 * marketValue and score only when not null. Readers use metricChanges to get the full line
 * item back.
 */
export interface StoredMetric {
  slug: string;
  value: number;
  previousValue?: number | null;
  yoyChange?: number | null;
  marketValue?: number | null;
  score?: number | null;
}
type StoredMetricExtras = Omit<StoredMetric, 'slug' | 'value'>;

/**
 * A StoredMetric as it is written in company_years.metrics (a JSON array of these):
 * [slug, value], or [slug, value, {the other fields}] when it has any. Positional rather
 * than {"slug":…,"value":…}: a year has ~50 line items, and the keys were a third of the
 * bytes that every import parses, hashes, sends, logs to the WAL and stores (the import
 * went about a tenth faster without them), and that every report reads back.
 */
export type StoredMetricRow = readonly [slug: string, value: number] | readonly [slug: string, value: number, extras: StoredMetricExtras];

export function readStoredMetric(row: StoredMetricRow): StoredMetric {
  return row.length === 2 ? { slug: row[0], value: row[1] } : { ...row[2], slug: row[0], value: row[1] };
}

export interface DerivedYear {
  year: number;
  isForecasted: boolean;
  size: CompanySize | null;
  statementDate: string | null;
  employees: number | null;
  employeesYoY: number | null;
  metrics: StoredMetricRow[];
}

export interface LatestFigures {
  latestFiledYear: number | null;
  size: CompanySize | null;
  revenue: number | null;
  totalAssets: number | null;
  employees: number | null;
}

/**
 * `x` to 4 decimals, halves away from zero: a fall of 12.345% reads -0.1235 as the same rise
 * reads 0.1235 (Math.round takes halves up, and gave -0.1234).
 */
export const round4 = (x: number): number => (Math.sign(x) * Math.round(Math.abs(x) * 10_000)) / 10_000;

/** Year-on-year change as a fraction (0.12 = +12%), 4 decimals; null when undefined. */
export function yoyChange(value: number | null, previous: number | null): number | null {
  if (value === null || previous === null || previous === 0) return null;
  return round4((value - previous) / Math.abs(previous));
}

const metricValue = (year: Pick<DossierYear, 'metrics'> | undefined, slug: string): number | null =>
  year?.metrics.find((m) => m.slug === slug)?.value ?? null;

/** A year's figures the EU SME rule reads: its employees, revenue and total assets. */
export const sizeFiguresOf = (year: Pick<DossierYear, 'employees' | 'metrics'>): SizeFigures => ({
  employees: year.employees,
  revenue: metricValue(year, REVENUE_SLUG),
  totalAssets: metricValue(year, TOTAL_ASSETS_SLUG),
});

/**
 * A line item's previousValue and yoyChange: as stored when stored, else derived from the
 * fiscal year just before (year - 1, not the nearest older one: a gap means there is no
 * comparable figure). The writer and every reader use this one rule; where comparesWith says
 * no to year - 1 (a filed year after a forecast), the writer stores previousValue null.
 */
export function metricChanges(m: StoredMetric, previousYear: ReadonlyMap<string, number> | undefined): { previousValue: number | null; yoyChange: number | null } {
  const previousValue = m.previousValue !== undefined ? m.previousValue : previousYear?.get(m.slug) ?? null;
  return { previousValue, yoyChange: m.yoyChange !== undefined ? m.yoyChange : yoyChange(m.value, previousValue) };
}

/** slug → value of one year's metrics, for metricChanges. */
export const metricValues = (metrics: readonly { slug: string; value: number }[] | undefined): Map<string, number> =>
  new Map(metrics?.map((m) => [m.slug, m.value]));

/** metricValues of a stored year. */
export const storedMetricValues = (rows: readonly StoredMetricRow[] | undefined): Map<string, number> =>
  new Map(rows?.map((r) => [r[0], r[1]]));

/**
 * Whether `year`'s changes are measured against `previous`: the fiscal year just before (a gap
 * means no comparable figure), and for a filed year only a filed one (a forecast is no base
 * for what was filed). A forecast is compared with the year before it, filed or forecast.
 */
export const comparesWith = (year: Pick<DossierYear, 'year' | 'isForecasted'>, previous: Pick<DossierYear, 'year' | 'isForecasted'> | undefined): boolean =>
  previous !== undefined && previous.year === year.year - 1 && (year.isForecasted || !previous.isForecasted);

/**
 * Prepares a dossier's years for storage. What the dossier omits is derived: employeesYoY
 * from the year it compares with (comparesWith), and size from the EU rule when the year has
 * figures but no size. Line items keep only what cannot be derived again on reading (see
 * StoredMetric); a value the dossier gives that differs from the derived one, including an
 * explicit null, is kept.
 */
export function deriveYearFigures(years: DossierYear[]): DerivedYear[] {
  const byYear = new Map(years.map((y) => [y.year, y]));
  return years.map((y) => {
    const before = byYear.get(y.year - 1);
    const prev = comparesWith(y, before) ? before : undefined;
    // Reading derives a line item's changes from year - 1 whatever it is (metricChanges): after
    // a forecast, a filed year stores previousValue null explicitly, so reading gives null too.
    const readsForecast = prev === undefined && before !== undefined;
    // Only line items that state a previous value or a change need the year before's values:
    // built on first use, as most dossiers state neither (the importer's hot path).
    let beforeValues: Map<string, number> | undefined;
    const valueBefore = (slug: string) => (beforeValues ??= metricValues(before?.metrics)).get(slug) ?? null;
    const employeesYoY = y.employeesYoY !== undefined ? y.employeesYoY : yoyChange(y.employees, prev?.employees ?? null);
    return {
      year: y.year,
      isForecasted: y.isForecasted,
      size: y.size ?? classifyCompanySize(sizeFiguresOf(y)),
      statementDate: y.statementDate,
      employees: y.employees,
      employeesYoY,
      metrics: y.metrics.map((m): StoredMetricRow => {
        if (m.previousValue === undefined && m.yoyChange === undefined && m.marketValue === null && m.score === null && !readsForecast) return [m.slug, m.value];
        let extras: StoredMetricExtras | undefined;
        const readPrevious = valueBefore(m.slug);
        const previousValue = m.previousValue !== undefined ? m.previousValue : readsForecast ? null : readPrevious;
        if (previousValue !== readPrevious) (extras ??= {}).previousValue = previousValue;
        if (m.yoyChange !== undefined && m.yoyChange !== yoyChange(m.value, previousValue)) (extras ??= {}).yoyChange = m.yoyChange;
        if (m.marketValue !== null) (extras ??= {}).marketValue = m.marketValue;
        if (m.score !== null) (extras ??= {}).score = m.score;
        return extras === undefined ? [m.slug, m.value] : [m.slug, m.value, extras];
      }),
    };
  });
}

/** The newest non-forecast year's figures, denormalised onto companies for search and peers. */
export function latestFigures(years: DossierYear[]): LatestFigures {
  let latest: DossierYear | undefined;
  for (const y of years) if (!y.isForecasted && (latest === undefined || y.year > latest.year)) latest = y;
  if (latest === undefined) return { latestFiledYear: null, size: null, revenue: null, totalAssets: null, employees: null };
  const revenue = metricValue(latest, REVENUE_SLUG);
  const totalAssets = metricValue(latest, TOTAL_ASSETS_SLUG);
  const figures = { employees: latest.employees, revenue: revenue === null ? null : Math.round(revenue), totalAssets: totalAssets === null ? null : Math.round(totalAssets) };
  return { latestFiledYear: latest.year, size: latest.size ?? classifyCompanySize(figures), ...figures };
}
