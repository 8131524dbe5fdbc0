// EU SME definition (Recommendation 2003/361/EC), as decisions.md fixes it. The writer uses it
// to fill `size` when a dossier omits it (a size only when the known figures settle it), and the
// profile uses isLargeCompany to pick its branch when a year has no size. Unknown figures count
// as zero there: a company is only "large" on evidence.
import type { CompanySize } from './schemas/index.js';

export type { CompanySize };

export interface SizeFigures {
  employees: number | null;
  /** Turnover, euro. */
  revenue: number | null;
  /** Balance-sheet total, euro. */
  totalAssets: number | null;
}

const M = 1_000_000;

export function isLargeCompany(f: SizeFigures): boolean {
  return (f.employees ?? 0) >= 250 || ((f.revenue ?? 0) > 50 * M && (f.totalAssets ?? 0) > 43 * M);
}

/** The size of a year whose three figures are all known (the EU SME thresholds). */
function sizeOfKnown(employees: number, revenue: number, totalAssets: number): CompanySize {
  if (employees >= 250 || (revenue > 50 * M && totalAssets > 43 * M)) return 'large';
  if (employees >= 50 || (revenue > 10 * M && totalAssets > 10 * M)) return 'medium';
  if (employees >= 10 || (revenue > 2 * M && totalAssets > 2 * M)) return 'small';
  return 'micro';
}

/**
 * The least size the known figures allow, unknown ones counting as zero: what a stated size
 * may not be below. null when nothing is known about the year.
 */
export function leastCompanySize(f: SizeFigures): CompanySize | null {
  if (f.employees === null && f.revenue === null && f.totalAssets === null) return null;
  return sizeOfKnown(f.employees ?? 0, f.revenue ?? 0, f.totalAssets ?? 0);
}

/**
 * The size the known figures settle whatever the unknown ones are (the least and the greatest
 * they allow agree), else null: a revenue of 60M € alone could be any size, and is unknown,
 * not "micro"; 300 employees alone are large, and 5 employees with 1M € of revenue micro.
 */
export function classifyCompanySize(f: SizeFigures): CompanySize | null {
  const least = leastCompanySize(f);
  const greatest = sizeOfKnown(f.employees ?? Infinity, f.revenue ?? Infinity, f.totalAssets ?? Infinity);
  return least === greatest ? least : null;
}
