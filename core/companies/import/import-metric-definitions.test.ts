import { randomBase62 } from '../../ids/index.js';
import { afterAll, describe, expect, it } from 'vitest';
import { testDb } from '../../../test/support/database.js';
import { fiscalCodes } from '../../../test/support/company-dossiers.js';
import { createLogger } from '../../logging/index.js';
import { createCompanyStore } from '../company-store.js';
import type { CompanyDossierInput, MetricCategory } from '../schemas/index.js';
import { upsertPreparedCompanies } from '../write-companies.js';
import { upsertMetricDefinitions } from '../write-metric-definitions.js';
import { importDossiers, type UpsertFn } from './import-dossiers.js';

// A custom slug (one the catalogue does not define) has one definition for every company:
// the data engineer's walkthrough, where a later line redefined an earlier company's metric.
const db = testDb({ poolMax: 6, applicationName: 'import-metric-definitions.test' });
const store = createCompanyStore({ db, queryTimeoutMs: 15_000, logger: createLogger({ level: 'silent' }) });
const nextCode = fiscalCodes();
afterAll(() => db.destroy());

// Each test its own slug: the definitions table is shared by every test file.
const newSlug = () => `green_capex_${randomBase62(8).toLowerCase()}`;

interface Described { name?: string; categories?: MetricCategory[]; unit?: string | null }
const line = (fiscalCode: string, legalName: string, slug: string, value: number, described: Described = {}): string => JSON.stringify({
  fiscalCode, legalName, years: [{ year: 2024, metrics: [{ slug: 'revenue', value: 1_000_000 }, { slug, value, ...described }] }],
} satisfies CompanyDossierInput);

const asEuros: Described = { name: 'Green capex', categories: ['assets'], unit: 'EUR' };
const asRatio: Described = { name: 'Green capex share', categories: ['ratio'], unit: 'ratio' };

/** The metric as the API serves it in the company's report. */
async function served(fiscalCode: string, slug: string) {
  store.forgetMetricDefinitions();
  const report = await store.companyReport(fiscalCode);
  const m = report?.financials[0]?.metrics.find((x) => x.slug === slug);
  return m && { name: m.name, categories: m.categories, unit: m.unit, value: m.value };
}
const definition = (slug: string) => db('metric_definitions').where({ slug }).first('name', 'categories', 'unit');

describe('importDossiers of metrics outside the catalogue', () => {
  it.each([
    [0, 500, 1], [2, 1, 2],
  ])('when a later line of the file describes a slug differently (parser threads: %i, batches of %i, writers: %i) then it is rejected naming the fields and the definition, and the first company keeps its metric', async (workers, batchSize, writers) => {
    const slug = newSlug();
    const [gamma, delta] = [nextCode(), nextCode()];
    const summary = await importDossiers({
      db, lines: [line(gamma, 'Gamma S.r.l.', slug, 250_000, asEuros), line(delta, 'Delta S.r.l.', slug, 0.12, asRatio)], workers, batchSize, writers,
    });

    expect(summary).toMatchObject({ lines: 2, accepted: 1, rejected: 1, created: 1 });
    expect(summary.rejections).toEqual([{
      line: 2,
      fiscalCode: delta,
      reason: `years[0].metrics[1].name, years[0].metrics[1].categories, years[0].metrics[1].unit: ${slug} is already defined by line 1 as name "Green capex", categories ["assets"], unit "EUR", not name "Green capex share", categories ["ratio"], unit "ratio"; use the same name, categories and unit as line 1, leave them out, or use another slug`,
    }]);
    expect(await served(gamma, slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR', value: 250_000 });
    expect(await store.companyReport(delta)).toBeNull();
  });

  it.each([
    ['first', 0], ['second', 1],
  ])('when the batch of the line that defines a slug and that of a later line giving part of it land in either order (the %s held back) then both are accepted and served the first line\'s definition', async (_, held) => {
    const slug = newSlug();
    const [gamma, delta] = [nextCode(), nextCode()];
    let calls = 0;
    const holding: UpsertFn = async (database, companies) => {
      if (calls++ === held) await new Promise((resolve) => setTimeout(resolve, 300));
      return upsertPreparedCompanies(database, companies);
    };
    const summary = await importDossiers({
      db, lines: [line(gamma, 'Gamma S.r.l.', slug, 250_000, asEuros), line(delta, 'Delta S.r.l.', slug, 90_000, { name: 'Green capex' })], batchSize: 1, writers: 2, upsert: holding,
    });
    expect(summary).toMatchObject({ accepted: 2, rejected: 0, created: 2 });
    expect(await served(gamma, slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR', value: 250_000 });
    expect(await served(delta, slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR', value: 90_000 });
  });

  it('when a line describes one slug two ways in two years then it is rejected naming the second', async () => {
    const slug = newSlug();
    const code = nextCode();
    const twoWays = JSON.stringify({
      fiscalCode: code, legalName: 'Epsilon S.r.l.',
      years: [{ year: 2023, metrics: [{ slug, value: 1, ...asEuros }] }, { year: 2024, metrics: [{ slug, value: 2, ...asEuros, unit: 'USD' }] }],
    } satisfies CompanyDossierInput);
    const summary = await importDossiers({ db, lines: [twoWays] });
    expect(summary.rejections.map((r) => r.reason)).toEqual([
      `years[1].metrics[0].unit: ${slug} is already defined by years[0].metrics[0] of this line as name "Green capex", categories ["assets"], unit "EUR", not unit "USD"; use the same name, categories and unit as years[0].metrics[0], leave them out, or use another slug`,
    ]);
    expect(await definition(slug)).toBeUndefined();
  });

  it('when another file describes a stored slug differently then its line is rejected, and the stored definition and the first company are unchanged', async () => {
    const slug = newSlug();
    const [gamma, delta] = [nextCode(), nextCode()];
    expect(await importDossiers({ db, lines: [line(gamma, 'Gamma S.r.l.', slug, 250_000, asEuros)] })).toMatchObject({ created: 1, rejected: 0 });

    const fileB = await importDossiers({ db, lines: [line(delta, 'Delta S.r.l.', slug, 0.12, { unit: 'ratio' })] });
    expect(fileB).toMatchObject({ accepted: 0, rejected: 1, created: 0 });
    expect(fileB.rejections[0]!.reason).toBe(
      `years[0].metrics[1].unit: ${slug} is already defined in the store as name "Green capex", categories ["assets"], unit "EUR", not unit "ratio"; use the same name, categories and unit as the stored definition, leave them out, or use another slug`,
    );
    expect(await definition(slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR' });
    expect(await served(gamma, slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR', value: 250_000 });
  });

  it('when lines give the same definition (categories in any order), part of it, or none then they are accepted and every company is served the stored one', async () => {
    const slug = newSlug();
    const codes = [nextCode(), nextCode(), nextCode(), nextCode()];
    const both: Described = { name: 'Green capex', categories: ['balance_sheet', 'assets'], unit: 'EUR' };
    await importDossiers({ db, lines: [line(codes[0]!, 'Gamma S.r.l.', slug, 250_000, both)] });

    const summary = await importDossiers({
      db,
      lines: [
        line(codes[1]!, 'Same S.r.l.', slug, 1, { ...both, categories: ['assets', 'balance_sheet'] }),
        line(codes[2]!, 'Part S.r.l.', slug, 2, { unit: 'EUR' }),
        line(codes[3]!, 'None S.r.l.', slug, 3),
      ],
      batchSize: 1,
    });
    expect(summary).toMatchObject({ accepted: 3, rejected: 0, created: 3 });
    for (const [i, code] of codes.entries()) {
      expect(await served(code, slug)).toEqual({ name: 'Green capex', categories: ['balance_sheet', 'assets'], unit: 'EUR', value: i === 0 ? 250_000 : i });
    }
  });

  it('when a slug was first reported without a description then a later line may describe it, once', async () => {
    const slug = newSlug();
    const [bare, described, other] = [nextCode(), nextCode(), nextCode()];
    await importDossiers({ db, lines: [line(bare, 'Bare S.r.l.', slug, 7)] });
    expect(await definition(slug)).toMatchObject({ categories: [], unit: null });

    const summary = await importDossiers({ db, lines: [line(described, 'Described S.r.l.', slug, 8, asEuros), line(other, 'Other S.r.l.', slug, 9, asRatio)] });
    expect(summary.rejections.map((r) => r.line)).toEqual([2]);
    expect(await served(bare, slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR', value: 7 });
  });

  it('when the only company reporting a slug is re-imported to fix a typo in its name then it is rejected too; after the definition is corrected in the store, the fixed line is accepted', async () => {
    const slug = newSlug();
    const gamma = nextCode();
    await importDossiers({ db, lines: [line(gamma, 'Gamma S.r.l.', slug, 250_000, { ...asEuros, name: 'Gren capex' })] });

    const fixed = line(gamma, 'Gamma S.r.l.', slug, 250_000, asEuros);
    const refused = await importDossiers({ db, lines: [fixed] });
    expect(refused.rejections.map((r) => r.reason)).toEqual([expect.stringMatching(new RegExp(`^years\\[0\\]\\.metrics\\[1\\]\\.name: ${slug} is already defined in the store as name "Gren capex"`))]);
    expect((await definition(slug)).name).toBe('Gren capex');

    // The documented way (docs/import-format.md): correct the definition itself, for every company.
    await db('metric_definitions').where({ slug }).update({ name: 'Green capex' });
    expect(await importDossiers({ db, lines: [fixed] })).toMatchObject({ rejected: 0, unchanged: 1 });
    expect(await served(gamma, slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR', value: 250_000 });
  });

  it('when another import defines the slug while this one writes then the line is rejected at write time, naming the stored definition', async () => {
    const slug = newSlug();
    const delta = nextCode();
    // Another import's batch, still open, defines the slug as euros: this import cannot see it
    // when it starts, and its batch waits on that row's insert.
    const other = await db.transaction();
    let committing: Promise<unknown> | undefined;
    try {
      await upsertMetricDefinitions(other, [{ slug, path: 'years[0].metrics[0]', ...asEuros }]);
      const writing: UpsertFn = async (database, companies) => {
        setTimeout(() => (committing = other.commit()), 300);
        return upsertPreparedCompanies(database, companies);
      };
      const summary = await importDossiers({ db, lines: [line(delta, 'Delta S.r.l.', slug, 0.12, asRatio)], upsert: writing });
      // The batch waited for the other import's commit.
      expect(committing).toBeDefined();
      expect(summary).toMatchObject({ accepted: 1, rejected: 1, created: 0 });
      expect(summary.rejections[0]!.reason).toMatch(new RegExp(`^years\\[0\\]\\.metrics\\[1\\]\\.name, years\\[0\\]\\.metrics\\[1\\]\\.categories, years\\[0\\]\\.metrics\\[1\\]\\.unit: ${slug} is already defined in the store as name "Green capex", categories \\["assets"\\], unit "EUR"`));
    } finally {
      await (committing ?? other.rollback());
    }
    expect(await definition(slug)).toEqual({ name: 'Green capex', categories: ['assets'], unit: 'EUR' });
    expect(await store.companyReport(delta)).toBeNull();
  });

  it('when a line names a catalogue slug with another name, categories or unit then they are ignored and the catalogue\'s are served', async () => {
    const code = nextCode();
    const summary = await importDossiers({ db, lines: [line(code, 'Catalogue S.r.l.', 'total_assets', 5, { name: 'Assets', categories: ['ratio'], unit: 'USD' })] });
    expect(summary).toMatchObject({ accepted: 1, rejected: 0 });
    expect(await served(code, 'total_assets')).toEqual({ name: 'Total assets', categories: ['balance_sheet', 'assets'], unit: 'EUR', value: 5 });
  });
});
