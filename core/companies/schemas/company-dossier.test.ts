import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { formatIssues } from '../import/parse-dossier-line.js';
import { checkYear, companyDossierSchema, dossierMetricSchema, dossierYearSchema } from './company-dossier.js';

// The year schema checks plain line items by hand (a fast path) and hands every other list to
// zod. It must be invisible: the same answers, data and errors as the schema written plainly.
// A list with a wrong item fails as a whole there, so the year's own check then does not run
// (written plainly, zod would run it on the items it could read).
const plainlyWritten = z.strictObject({ ...dossierYearSchema.shape, metrics: z.array(dossierMetricSchema).default([]) })
  .superRefine(checkYear, { when: (payload) => payload.issues.length === 0 });

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

describe('a year\'s stated size', () => {
  const year = (size: string | null, employees: number | null, revenue?: number, totalAssets?: number) => ({
    year: 2024,
    size,
    employees,
    metrics: [...(revenue === undefined ? [] : [{ slug: 'revenue', value: revenue }]), ...(totalAssets === undefined ? [] : [{ slug: 'total_assets', value: totalAssets }])],
  });
  const refusal = (y: ReturnType<typeof year>) => {
    const result = companyDossierSchema.safeParse({ fiscalCode: '27703020100', legalName: 'Size Test S.R.L.', years: [y] });
    return result.success ? undefined : formatIssues(result.error.issues);
  };

  it('when it agrees with the year\'s figures under the EU SME rule, or the figures leave it open, then the line is taken', () => {
    expect(refusal(year('large', 250))).toBeUndefined();
    expect(refusal(year('large', 10, 50_000_001, 43_000_001))).toBeUndefined();
    expect(refusal(year('medium', 249, 60_000_000, 43_000_000))).toBeUndefined();
    expect(refusal(year('small', 20, 2_000_000, 1_500_000))).toBeUndefined();
    // Figures missing: the stated size may be above what the known ones show, never below.
    expect(refusal(year('large', 100))).toBeUndefined();
    expect(refusal(year('medium', null, 20_000_000))).toBeUndefined();
    expect(refusal(year('micro', null))).toBeUndefined();
    expect(refusal(year(null, 300, 1_000_000, 1_000_000))).toBeUndefined();
  });

  it('when it contradicts the year\'s figures, then the line is refused at years[].size, saying what the figures make the company', () => {
    const rule = 'under the EU SME definition (large: 250+ employees, or revenue above 50M € and total assets above 43M €): correct it, or leave size out and it is derived';
    expect(refusal(year('small', 300, 1_000_000, 1_000_000))).toContain(`years[0].size: is small, but the year's figures (employees 300, revenue 1000000, total_assets 1000000) make the company large ${rule}`);
    expect(refusal(year('medium', 100, 100_000_000, 100_000_000))).toContain('years[0].size: is medium, but the year\'s figures (employees 100, revenue 100000000, total_assets 100000000) make the company large');
    expect(refusal(year('large', 100, 1_000_000, 1_000_000))).toContain('years[0].size: is large, but the year\'s figures (employees 100, revenue 1000000, total_assets 1000000) make the company medium');
    expect(refusal(year('small', 60))).toContain('years[0].size: is small, but the year\'s figures (employees 60) make the company at least medium');
  });
});

describe('a holder\'s kind', () => {
  const parse = (input: Record<string, unknown>) => companyDossierSchema.safeParse({ fiscalCode: '27703020100', legalName: 'Kind Test S.r.l.', ...input });

  it('when a line says a holder\'s kind then it is kept, and when it does not then the kind its code and name point at is filled in', () => {
    const result = parse({
      shareholders: [
        { name: 'Müller Beteiligungs GmbH', share: 0.5 },
        { name: 'Nordsee Partner', fiscalCode: 'dehrb12345678901' },
        { name: 'Anna Conti Trust', kind: 'company' },
        { name: 'Rossi S.r.l.', kind: 'person' },
        { name: 'Laura Bianchi', share: 0.5 },
      ],
      beneficialOwners: [{ name: 'Hudson Ridge Holdings Inc.' }, { name: 'Laura Bianchi' }],
      subsidiaries: [{ name: 'Figlia S.r.l.', fiscalCode: '12345678901' }, { name: 'Mario Rossi', kind: 'company' }],
    });
    expect(result.success ? 'ok' : formatIssues(result.error.issues)).toBe('ok');
    const kinds = (list: { kind: string }[]) => list.map((h) => h.kind);
    expect(kinds(result.data!.shareholders)).toEqual(['company', 'company', 'company', 'person', 'person']);
    expect(kinds(result.data!.beneficialOwners)).toEqual(['company', 'person']);
    expect(kinds(result.data!.subsidiaries)).toEqual(['company', 'company']);
  });

  it('when a holder\'s code is a foreign entity\'s (a VAT number abroad) or an IT-prefixed Italian one, then the line is taken: the foreign kept as given, an entity, the Italian without IT', () => {
    const result = parse({
      shareholders: [
        { name: 'Siemens Beteiligungen', fiscalCode: 'DE811907980', share: 0.6 },
        { name: 'Groupe Dupont', fiscalCode: 'fr 403 032 650 45' },
        { name: 'Bianchi Holding', fiscalCode: 'IT04178130283' },
        { name: 'Acme Corp', fiscalCode: '12-3456789' },
      ],
    });
    expect(result.success ? 'ok' : formatIssues(result.error.issues)).toBe('ok');
    expect(result.data!.shareholders.map((h) => [h.fiscalCode, h.kind])).toEqual([['DE811907980', 'company'], ['FR40303265045', 'company'], ['04178130283', 'company'], ['123456789', 'company']]);
    const refused = parse({ shareholders: [{ name: 'Nobody', fiscalCode: 'X!' }] });
    expect(refused.success ? 'ok' : formatIssues(refused.error.issues)).toContain("shareholders[0].fiscalCode: must be an Italian fiscal code (11 digits or 16 characters) or a foreign entity's identifier");
  });

  it('when a kind is outside person and company, or a subsidiary is said to be a person, then the line is refused at that field', () => {
    const refusal = (input: Record<string, unknown>) => {
      const result = parse(input);
      return result.success ? undefined : formatIssues(result.error.issues);
    };
    expect(refusal({ shareholders: [{ name: 'Fondo Alfa', kind: 'trust' }] })).toContain('shareholders[0].kind');
    expect(refusal({ beneficialOwners: [{ name: 'Laura Bianchi', kind: 'Person' }] })).toContain('beneficialOwners[0].kind');
    expect(refusal({ subsidiaries: [{ name: 'Mario Rossi', kind: 'person' }] })).toContain('subsidiaries[0].kind');
  });
});
