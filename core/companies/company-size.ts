// EU SME definition (Recommendation 2003/361/EC), as decisions.md fixes it. The writer uses it
// to fill `size` when a dossier omits it, and the profile uses isLargeCompany to pick its
// branch, so both always agree. Unknown figures count as zero: a company is only "large" on
// evidence.
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

/** null when nothing is known about the year. */
export function classifyCompanySize(f: SizeFigures): CompanySize | null {
  if (f.employees === null && f.revenue === null && f.totalAssets === null) return null;
  if (isLargeCompany(f)) return 'large';
  const employees = f.employees ?? 0;
  const revenue = f.revenue ?? 0;
  const totalAssets = f.totalAssets ?? 0;
  if (employees >= 50 || (revenue > 10 * M && totalAssets > 10 * M)) return 'medium';
  if (employees >= 10 || (revenue > 2 * M && totalAssets > 2 * M)) return 'small';
  return 'micro';
}
