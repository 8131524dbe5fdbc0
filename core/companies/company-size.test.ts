import { describe, expect, it } from 'vitest';
import { dossier } from '../../test/support/company-dossiers.js';
import { classifyCompanySize, leastCompanySize } from './company-size.js';
import { deriveYearFigures, latestFigures } from './derive-year-figures.js';

const M = 1_000_000;
const figures = (employees: number | null, revenue: number | null, totalAssets: number | null) => ({ employees, revenue, totalAssets });

describe('company size (EU SME definition)', () => {
  it('when all three figures are known then each size is the one its thresholds give', () => {
    expect(classifyCompanySize(figures(250, 1 * M, 1 * M))).toBe('large');
    expect(classifyCompanySize(figures(100, 50 * M + 1, 43 * M + 1))).toBe('large');
    expect(classifyCompanySize(figures(100, 60 * M, 43 * M))).toBe('medium');
    expect(classifyCompanySize(figures(49, 10 * M + 1, 10 * M + 1))).toBe('medium');
    expect(classifyCompanySize(figures(10, 1 * M, 1 * M))).toBe('small');
    expect(classifyCompanySize(figures(9, 60 * M, 2 * M))).toBe('micro');
  });

  it('when figures are unknown then the size is given only if the known ones settle it, whatever the others are', () => {
    // 60M € of revenue alone could be a micro company with 2M € of assets or a large one.
    expect(classifyCompanySize(figures(null, 60 * M, null))).toBeNull();
    expect(classifyCompanySize(figures(null, 1 * M, 1 * M))).toBeNull();
    expect(classifyCompanySize(figures(null, null, null))).toBeNull();
    expect(classifyCompanySize(figures(300, null, null))).toBe('large');
    expect(classifyCompanySize(figures(null, 60 * M, 50 * M))).toBe('large');
    expect(classifyCompanySize(figures(5, 1 * M, null))).toBe('micro');
    expect(classifyCompanySize(figures(30, null, 5 * M))).toBe('small');
    expect(classifyCompanySize(figures(30, 20 * M, null))).toBeNull();
  });

  it('when figures are unknown then the least size counts them as zero: what a stated size may not be below', () => {
    expect(leastCompanySize(figures(null, 60 * M, null))).toBe('micro');
    expect(leastCompanySize(figures(60, null, null))).toBe('medium');
    expect(leastCompanySize(figures(null, null, null))).toBeNull();
  });

  it('when an imported year gives only its revenue then its size, and the latest size, are unknown', () => {
    const { years } = dossier('00905811006', { years: [{ year: 2024, metrics: [{ slug: 'revenue', value: 60 * M }] }] });
    expect(deriveYearFigures(years)[0]).toMatchObject({ year: 2024, size: null });
    expect(latestFigures(years)).toMatchObject({ latestFiledYear: 2024, size: null, revenue: 60 * M });
  });
});
