import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatIssues } from '../import/parse-dossier-line.js';
import { companyDossierSchema, dossierMetricSchema, dossierYearSchema } from './company-dossier.js';

// The year schema checks plain line items by hand (a fast path) and hands every other list to
// zod. It must be invisible: the same answers, data and errors as the schema written plainly.
const plainlyWritten = z.strictObject({ ...dossierYearSchema.shape, metrics: z.array(dossierMetricSchema).default([]) });

const outcome = (result: { success: boolean; data?: unknown; error?: z.ZodError }) =>
  result.success ? { data: result.data } : { issues: result.error!.issues.map((i) => ({ path: i.path, code: i.code, message: i.message })) };

// Line items built from every combination of these keys and values: each of the fast path's
// conditions, alone and together, on both sides of the line.
const slugs: unknown[] = ['revenue', 'net_profit_2', 'Revenue', 'net-profit', '', 7, null];
const amounts: unknown[] = [0, 253721, -1.5, Number.NaN, Number.POSITIVE_INFINITY, '12', null, undefined];
const extras: Record<string, unknown>[] = [{}, { marketValue: 3 }, { score: null }, { previousValue: 10 }, { yoyChange: 0.1 }, { name: 'Revenue' }, { unexpected: 1 }];

function lineItems(): unknown[] {
  const items: unknown[] = [null, 'revenue', [], ['revenue', 1], { slug: 'revenue' }, { value: 1 }];
  for (const slug of slugs) {
    for (const value of amounts) {
      for (const extra of extras) items.push({ slug, ...(value === undefined ? {} : { value }), ...extra });
    }
  }
  return items;
}

describe('dossierYearSchema line items', () => {
  it('when each kind of line item is alone in a year then the answer is the plainly written schema\'s', () => {
    const items = lineItems();
    expect(items.length).toBeGreaterThan(350);
    for (const item of items) {
      const year = { year: 2023, metrics: [{ slug: 'total_assets', value: 1 }, item] };
      expect(outcome(dossierYearSchema.safeParse(year)), JSON.stringify(item)).toStrictEqual(outcome(plainlyWritten.safeParse(year)));
    }
  });

  it('when a year\'s metrics are not a list, or absent, then the answer is the plainly written schema\'s', () => {
    for (const metrics of [undefined, null, 'revenue', {}, { 0: { slug: 'revenue', value: 1 } }, []]) {
      const year = { year: 2023, ...(metrics === undefined ? {} : { metrics }) };
      expect(outcome(dossierYearSchema.safeParse(year)), JSON.stringify(metrics)).toStrictEqual(outcome(plainlyWritten.safeParse(year)));
    }
  });

  it('when plain line items are read then each comes back whole, with the defaults filled in', () => {
    const parsed = dossierYearSchema.parse({ year: 2023, metrics: [{ slug: 'revenue', value: 10 }, { value: -2.5, slug: 'net_profit' }] });
    expect(parsed.metrics).toStrictEqual([
      { slug: 'revenue', value: 10, marketValue: null, score: null },
      { slug: 'net_profit', value: -2.5, marketValue: null, score: null },
    ]);
  });

  it('when a line item deep in a dossier is wrong then the error names its full path', () => {
    const dossier = {
      fiscalCode: '12345678901', legalName: 'Alfa SRL',
      years: [{ year: 2022, metrics: [] }, { year: 2023, metrics: [{ slug: 'revenue', value: 1 }, { slug: 'total_assets', value: 'many' }] }],
    };
    const result = companyDossierSchema.safeParse(dossier);
    expect(result.success).toBe(false);
    expect(formatIssues(result.error!.issues)).toBe('years[1].metrics[1].value: Invalid input: expected number, received string');
  });
});
