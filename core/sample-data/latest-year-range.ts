import { COMPANY_YEARS, FISCAL_YEARS } from '../companies/schemas/index.js';

// How far from the latest filed year (`latestYear`) a generated company's years reach.
// generate-dossiers.ts draws within these, and the latest years it accepts are derived from
// them and the import's own bounds, so every file it writes is one `cli import` takes: change a
// reach or a bound and the accepted range follows.

/** A dissolved company was dissolved this many years before latestYear at most. */
export const MAX_YEARS_SINCE_DISSOLUTION = 5;
/** A company's age at its last filed year: founded this many years before it. */
export const AGE_YEARS = { min: 2, max: 70 } as const;
/** Filed years of a company, at most. */
export const MAX_FILED_YEARS = 10;

interface Span { min: number; max: number }

// Each offset from latestYear. A dissolved company filed last the year before its dissolution;
// a company still active may have a forecast year after its last filed one.
const lastFiled: Span = { min: -MAX_YEARS_SINCE_DISSOLUTION - 1, max: 0 };
const reach = {
  founding: { min: lastFiled.min - AGE_YEARS.max, max: lastFiled.max - AGE_YEARS.min },
  dissolution: { min: -MAX_YEARS_SINCE_DISSOLUTION, max: 0 },
  fiscal: { min: lastFiled.min - MAX_FILED_YEARS + 1, max: lastFiled.max + 1 },
} satisfies Record<string, Span>;

/** The latest years whose every reach lands inside the import's bounds for it. */
const within = (bounds: Span, offsets: Span): Span => ({ min: bounds.min - offsets.min, max: bounds.max - offsets.max });
const parts = [within(COMPANY_YEARS, reach.founding), within(COMPANY_YEARS, reach.dissolution), within(FISCAL_YEARS, reach.fiscal)];

/** The latest filed years the generator accepts. */
export const LATEST_YEAR_RANGE: Readonly<Span> = {
  min: Math.max(...parts.map((p) => p.min)),
  max: Math.min(...parts.map((p) => p.max)),
};

/** Why `year` cannot be the latest filed year, or null when it can: a message for the operator. */
export function latestYearRefusal(year: number): string | null {
  if (Number.isInteger(year) && year >= LATEST_YEAR_RANGE.min && year <= LATEST_YEAR_RANGE.max) return null;
  return `must be a year from ${LATEST_YEAR_RANGE.min} to ${LATEST_YEAR_RANGE.max}, so that every year written is one \`cli import\` takes `
    + `(fiscal years ${FISCAL_YEARS.min}–${FISCAL_YEARS.max}, founding and dissolution years ${COMPANY_YEARS.min}–${COMPANY_YEARS.max}): `
    + `fiscal years reach ${-reach.fiscal.min} years before it and ${reach.fiscal.max} after, founding years ${-reach.founding.min} before`;
}
