import { afterAll, describe, expect, it } from 'vitest';
import { testDb } from '../../test/support/database.js';
import { dossier, fiscalCodes, fullDossier, years } from '../../test/support/company-dossiers.js';
import { createLogger } from '../logging/index.js';
import { createCompanyStore } from './company-store.js';
import { upsertCompanies } from './write-companies.js';
import { MetricDefinitionConflict } from './custom-metric-definitions.js';
import { upsertMetricDefinitions } from './write-metric-definitions.js';

const db = testDb({ applicationName: 'write-companies.test' });
const nextCode = fiscalCodes();
const store = createCompanyStore({ db, queryTimeoutMs: 5_000, logger: createLogger({ level: 'silent' }) });
afterAll(() => db.destroy());

const company = (code: string) => db('companies').where({ fiscal_code: code }).first();
const childCounts = async (id: number) => {
  const count = async (table: string) => Number((await db(table).where({ company_id: id }).count({ n: '*' }))[0]!.n);
  return { holders: await count('company_holders'), officers: await count('company_officers'), branches: await count('company_branches'), years: await count('company_years') };
};

describe('upsertCompanies', () => {
  it('when the same dossiers are written twice then the second write reports them unchanged and touches nothing', async () => {
    const batch = [fullDossier(nextCode(), { shareholder: nextCode(), subsidiary: nextCode() }), dossier(nextCode())];
    expect(await upsertCompanies(db, batch)).toEqual({ created: 2, updated: 0, unchanged: 0 });
    const before = await company(batch[0]!.fiscalCode);
    const rowsBefore = await db('company_years').where({ company_id: before.id }).orderBy('year');

    expect(await upsertCompanies(db, batch)).toEqual({ created: 0, updated: 0, unchanged: 2 });
    const after = await company(batch[0]!.fiscalCode);
    expect(after.updated_at).toEqual(before.updated_at);
    expect(after.content_hash).toBe(before.content_hash);
    // Not even rewritten with equal values: a rewrite would give the rows new tuple ids.
    const ctids = async () => (await db.raw('SELECT ctid::text FROM company_years WHERE company_id = ? ORDER BY year', [before.id])).rows;
    expect(await db('company_years').where({ company_id: before.id }).orderBy('year')).toEqual(rowsBefore);
    const first = await ctids();
    await upsertCompanies(db, batch);
    expect(await ctids()).toEqual(first);
  });

  it('when child rows hold quotes, backslashes, commas, braces, "NULL" and line breaks then they are stored exactly', async () => {
    const awkward = ['He said "ciao", {then} left', 'C:\\dati\\"quoted"\\', 'NULL', ' spaced ', 'due\nrighe', 'Società «Ünïcode» 🚀', ''];
    const code = nextCode();
    const base = fullDossier(code, { shareholder: nextCode(), subsidiary: nextCode() });
    const address = { line1: 'Via "Larga", 1\\b', line2: '{x}', locality: 'NULL', postalCode: null, countryCode: 'IT' };
    await upsertCompanies(db, [{
      ...base,
      shareholders: awkward.filter((n) => n !== '').map((name, i) => ({ name, share: i === 0 ? 1e-7 : null, fiscalCode: i === 1 ? 'NULL' : null, kind: 'person' as const })),
      officers: awkward.filter((n) => n !== '').map((name, i) => ({ name, role: i === 0 ? '' : name, roleCategory: 'director' as const })),
      branches: [{ legalName: awkward[0]!, address }, { legalName: 'NULL', address: null }],
    }]);
    const { id } = await company(code);
    const holders = await db('company_holders').where({ company_id: id, relation: 'shareholder' }).orderBy('position');
    expect(holders.map((h) => [h.name, h.share, h.related_fiscal_code])).toEqual(awkward.filter((n) => n !== '').map((name, i) => [name, i === 0 ? 1e-7 : null, i === 1 ? 'NULL' : null]));
    const officers = await db('company_officers').where({ company_id: id }).orderBy('position');
    expect(officers.map((o) => [o.name, o.role])).toEqual(awkward.filter((n) => n !== '').map((n, i) => [n, i === 0 ? '' : n]));
    const branches = await db('company_branches').where({ company_id: id }).orderBy('position');
    expect(branches.map((b) => [b.legal_name, b.address])).toEqual([[awkward[0], address], ['NULL', null]]);
  });

  it('when a dossier changes then its columns are updated and its children replaced', async () => {
    const code = nextCode();
    const original = fullDossier(code, { shareholder: nextCode(), subsidiary: nextCode() });
    await upsertCompanies(db, [original]);
    const before = await company(code);
    expect(await childCounts(before.id)).toEqual({ holders: 4, officers: 3, branches: 2, years: 13 });

    const changed = { ...original, legalName: 'Renamed SRL', officers: original.officers.slice(0, 1), branches: [], shareholders: [], years: original.years.slice(0, 2) };
    expect(await upsertCompanies(db, [changed])).toEqual({ created: 0, updated: 1, unchanged: 0 });
    const after = await company(code);
    expect(after.id).toBe(before.id);
    expect(after.legal_name).toBe('Renamed SRL');
    expect(new Date(after.updated_at).getTime()).toBeGreaterThan(new Date(before.updated_at).getTime());
    expect(after.created_at).toEqual(before.created_at);
    expect(await childCounts(before.id)).toEqual({ holders: 2, officers: 1, branches: 0, years: 2 });
    expect(after.latest_filed_year).toBe(2014);
  });

  it('when a holder names a company that arrives in a later batch then the link is made when it arrives', async () => {
    const [parent, child, sibling] = [nextCode(), nextCode(), nextCode()];
    await upsertCompanies(db, [dossier(child, { shareholders: [{ name: 'Parent SPA', share: 1, fiscalCode: parent }] })]);
    const childRow = await company(child);
    const link = () => db('company_holders').where({ company_id: childRow.id, relation: 'shareholder' }).first();
    expect((await link()).related_company_id).toBeNull();
    expect((await link()).related_fiscal_code).toBe(parent);

    // The parent arrives, together with a sibling that names it in the same batch.
    await upsertCompanies(db, [
      dossier(sibling, { shareholders: [{ name: 'Parent SPA', share: 0.5, fiscalCode: parent }] }),
      dossier(parent, { subsidiaries: [{ name: 'Child', share: 1, fiscalCode: child }] }),
    ]);
    const parentRow = await company(parent);
    expect((await link()).related_company_id).toBe(parentRow.id);
    const siblingLink = await db('company_holders').where({ company_id: (await company(sibling)).id }).first();
    expect(siblingLink.related_company_id).toBe(parentRow.id);
    const down = await db('company_holders').where({ company_id: parentRow.id, relation: 'subsidiary' }).first();
    expect(down.related_company_id).toBe(childRow.id);
  });

  it('when previous values, changes and size are omitted then they are derived from the year before', async () => {
    const code = nextCode();
    await upsertCompanies(db, [dossier(code, {
      years: [
        ...years([{ year: 2022, revenue: 1_000_000, totalAssets: 500_000, employees: 20 }, { year: 2023, revenue: 1_250_000, totalAssets: 400_000, employees: 25 }]),
        // 2021 is missing, so 2022 has nothing to compare with; 2024 brings its own values.
        { year: 2024, employees: 30, employeesYoY: 0.5, size: 'medium', metrics: [{ slug: 'revenue', value: 900_000, previousValue: null, yoyChange: null, score: 7 }] },
        ...years([{ year: 2025, revenue: 99_000_000, totalAssets: 99_000_000, employees: 400, isForecasted: true }]),
      ],
    })]);
    const report = await store.companyReport(code);
    const revenue = (year: number) => report!.financials.find((f) => f.year === year)!.metrics.find((m) => m.slug === 'revenue');
    expect(report!.financials.map((f) => [f.year, f.size, f.employeesYoY])).toEqual([[2025, 'large', 12.3333], [2024, 'medium', 0.5], [2023, 'small', 0.25], [2022, 'small', null]]);
    expect(revenue(2022)).toMatchObject({ value: 1_000_000, previousValue: null, yoyChange: null });
    expect(revenue(2023)).toMatchObject({ value: 1_250_000, previousValue: 1_000_000, yoyChange: 0.25, marketValue: null, score: null });
    expect(revenue(2024)).toMatchObject({ value: 900_000, previousValue: null, yoyChange: null, score: 7 });
    expect(revenue(2025)).toMatchObject({ value: 99_000_000, previousValue: 900_000, yoyChange: 109 });

    // Stored compactly: only what cannot be derived again on reading.
    const row = await company(code);
    const stored = async (year: number) => (await db('company_years').where({ company_id: row.id, year }).first()).metrics.find((m: unknown[]) => m[0] === 'revenue');
    expect(await stored(2023)).toEqual(['revenue', 1_250_000]);
    // yoyChange null is what a null previous value gives anyway, so it is not stored.
    expect(await stored(2024)).toEqual(['revenue', 900_000, { previousValue: null, score: 7 }]);
    // Denormalised from the newest non-forecast year (2024), not the 2025 forecast.
    expect(row).toMatchObject({ latest_filed_year: 2024, size: 'medium', latest_revenue: 900_000, latest_total_assets: null, latest_employees: 30 });
  });

  it('when a dossier gives previous values equal to the derived ones then the report is the same as without them', async () => {
    const [withValues, without] = [nextCode(), nextCode()];
    const base = years([{ year: 2023, revenue: 100, totalAssets: 50 }, { year: 2024, revenue: 130, totalAssets: 40 }]);
    const explicit = base.map((y) => ({ ...y, metrics: y.metrics!.map((m) => (y.year === 2024 ? { ...m, previousValue: m.slug === 'revenue' ? 100 : m.slug === 'total_assets' ? 50 : 5, yoyChange: m.slug === 'revenue' ? 0.3 : m.slug === 'total_assets' ? -0.2 : 0.4 } : m)) }));
    await upsertCompanies(db, [dossier(withValues, { years: explicit }), dossier(without, { years: base })]);
    const a = await store.companyReport(withValues);
    const b = await store.companyReport(without);
    expect(a!.financials).toEqual(b!.financials);
    expect(a!.financials[0]!.metrics.find((m) => m.slug === 'total_assets')).toMatchObject({ previousValue: 50, yoyChange: -0.2 });
  });

  it('when a dossier carries metrics outside the catalogue then their definitions are stored, and the catalogue keeps its names', async () => {
    const slug = `test_kpi_${nextCode()}`;
    const bare = `test_bare_${nextCode()}`;
    await upsertCompanies(db, [dossier(nextCode(), {
      years: [{ year: 2024, metrics: [
        { slug, value: 1, name: 'Test KPI', categories: ['ratio', 'efficiency'], unit: 'ratio' },
        { slug: bare, value: 2 },
        { slug: 'revenue', value: 3, name: 'Not the catalogue name' },
      ] }],
    })]);
    const defs = await db('metric_definitions').whereIn('slug', [slug, bare, 'revenue']).orderBy('slug');
    const bySlug = new Map(defs.map((d) => [d.slug, d]));
    expect(bySlug.get(slug)).toMatchObject({ name: 'Test KPI', categories: ['ratio', 'efficiency'], unit: 'ratio' });
    expect(bySlug.get(bare)).toMatchObject({ name: `Test bare ${bare.slice('test_bare_'.length)}`, categories: [], unit: null });
    expect(bySlug.get('revenue').name).toMatch(/^Revenue from sales and services/);

    // A later bare mention does not erase the description.
    await upsertCompanies(db, [dossier(nextCode(), { years: [{ year: 2024, metrics: [{ slug, value: 5 }] }] })]);
    expect((await db('metric_definitions').where({ slug }).first()).name).toBe('Test KPI');
  });

  it('when a write describes a stored custom slug otherwise then it throws MetricDefinitionConflict and writes nothing', async () => {
    const slug = `test_kpi_${nextCode()}`;
    const [first, second] = [nextCode(), nextCode()];
    await upsertCompanies(db, [dossier(first, { years: [{ year: 2024, metrics: [{ slug, value: 1, name: 'Test KPI', unit: 'EUR' }] }] })]);
    const redefining = upsertCompanies(db, [dossier(second, { years: [{ year: 2024, metrics: [{ slug, value: 0.1, name: 'Test KPI', unit: 'ratio' }] }] })]);
    await expect(redefining).rejects.toBeInstanceOf(MetricDefinitionConflict);
    await expect(redefining).rejects.toThrow(`years[0].metrics[0].unit: ${slug} is already defined in the store as name "Test KPI", categories [], unit "EUR", not unit "ratio"`);
    expect(await company(second)).toBeUndefined();
    expect(await db('metric_definitions').where({ slug }).first('name', 'unit')).toEqual({ name: 'Test KPI', unit: 'EUR' });
  });

  it('when two writers send the same catalogue side by side then neither waits for the other', async () => {
    // Every import batch sends the whole catalogue; concurrent batches must not queue on
    // locks of definitions that are already equal.
    await db.transaction((trx) => upsertMetricDefinitions(trx, []));
    const first = await db.transaction();
    try {
      await upsertMetricDefinitions(first, []);
      await db.transaction(async (second) => {
        await second.raw("SET LOCAL lock_timeout = '2s'");
        await upsertMetricDefinitions(second, []);
      });
    } finally {
      await first.rollback();
    }
  });

  it('when a batch repeats a fiscal code then the last dossier wins', async () => {
    const code = nextCode();
    const result = await upsertCompanies(db, [dossier(code, { legalName: 'First' }), dossier(code, { legalName: 'Second' })]);
    expect(result).toEqual({ created: 1, updated: 0, unchanged: 0 });
    expect((await company(code)).legal_name).toBe('Second');
  });

  it('when a batch is larger than one statement chunk then every company is written', async () => {
    const batch = Array.from({ length: 1_100 }, () => dossier(nextCode(), { years: years([{ year: 2023, revenue: 10 }, { year: 2024, revenue: 20 }]) }));
    expect(await upsertCompanies(db, batch)).toEqual({ created: 1_100, updated: 0, unchanged: 0 });
    expect(await upsertCompanies(db, batch)).toEqual({ created: 0, updated: 0, unchanged: 1_100 });
  });
});
