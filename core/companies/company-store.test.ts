import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { createDb, createNotificationListener } from '../db/index.js';
import { AppError, errorCatalogue } from '../errors/index.js';
import { createLogger } from '../logging/index.js';
import { testDb } from '../../test/support/database.js';
import { dossier, fiscalCodes, fullDossier, years } from '../../test/support/company-dossiers.js';
import {
  companyFinancialsDataSchema, companyProfileLargeSchema, companyProfileSmallSchema, companyReportDataSchema, creditReportDataSchema,
} from './schemas/index.js';
import { createCompanyCache } from './company-cache.js';
import { createCompanyStore } from './company-store.js';
import { upsertCompanies } from './write-companies.js';

const db = testDb({ applicationName: 'company-store.test' });
const logLines: string[] = [];
const logger = createLogger({ level: 'debug', write: (line) => logLines.push(line) });
const store = createCompanyStore({ db, queryTimeoutMs: 2_000, logger });
const nextCode = fiscalCodes();
const M = 1_000_000;

// A 16-character codice fiscale (sole trader) unique to this run.
const soleTraderCode = () => `TST${randomBytes(16).toString('hex').toUpperCase().slice(0, 13)}`;

const full = { code: nextCode(), shareholder: nextCode(), subsidiary: nextCode() };
const sparse = nextCode();
const soleTrader = { code: soleTraderCode(), vat: nextCode() };
// Divisions 00 and 34 do not exist in NACE Rev. 2, so no other test's companies can be peers
// of these: the large company and its peers are in 34, the branch-rule cases in 00.
const large = nextCode();
const largeByEmployees = nextCode();
const notLarge = nextCode();
const peers = Array.from({ length: 14 }, (_, i) => ({ code: nextCode(), revenue: (i + 1) * 10 * M }));
const peerWithoutFigures = nextCode();
const otherDivision = nextCode();

beforeAll(async () => {
  await upsertCompanies(db, [
    fullDossier(full.code, full),
    dossier(full.shareholder, { legalName: 'Holding Test SPA' }),
    dossier(sparse, { legalName: null }),
    dossier(soleTrader.code, { vatNumber: `IT${soleTrader.vat}`, legalForm: 'DI' }),
    dossier(large, { naceCode: '34.10', years: years([{ year: 2023, revenue: 90 * M, totalAssets: 70 * M, employees: 100 }, { year: 2024, revenue: 100 * M, totalAssets: 80 * M, employees: 100 }]) }),
    dossier(largeByEmployees, { naceCode: '00.20', years: years([{ year: 2024, revenue: 1 * M, totalAssets: 1 * M, employees: 300 }]) }),
    dossier(notLarge, { naceCode: '00.20', years: years([{ year: 2024, revenue: 60 * M, totalAssets: 10 * M, employees: 100 }]), stateAids: { count: 2, countLast36Months: 1, amount: 5000, amountLast36Months: 1000 } }),
    ...peers.map((p) => dossier(p.code, { naceCode: '34.30', years: years([{ year: 2024, revenue: p.revenue, totalAssets: p.revenue, employees: 50 }]) })),
    dossier(peerWithoutFigures, { naceCode: '34' }),
    dossier(otherDivision, { naceCode: '04.10', years: years([{ year: 2024, revenue: 100 * M, totalAssets: 80 * M }]) }),
  ]);
});
afterAll(() => db.destroy());

describe('company store: the four shapes', () => {
  it('when a company has every part then the company report has all of it, 10 years newest first with named metrics', async () => {
    const report = await store.companyReport(full.code);
    expect(companyReportDataSchema.parse(report)).toEqual(report);
    expect(report!.financials.map((f) => f.year)).toEqual([2025, 2024, 2023, 2022, 2021, 2020, 2019, 2018, 2017, 2016]);
    expect(report!.financials[0]!.isForecasted).toBe(true);
    expect(report!.latestFiledYear).toBe(2024);
    expect(report!.latest).toEqual({ year: 2024, isForecasted: false, size: 'small', statementDate: '2024-12-31', employees: 41, employeesYoY: 0.025 });
    const revenue2024 = report!.financials[1]!.metrics.find((m) => m.slug === 'revenue');
    expect(revenue2024).toEqual({
      slug: 'revenue', name: expect.stringMatching(/^Revenue from sales and services/), categories: ['income_statement', 'revenue'], unit: 'EUR',
      value: 2_100_000, previousValue: 2_000_000, yoyChange: 0.05, marketValue: null, score: null,
    });
    expect(report!.identity).toMatchObject({ fiscalCode: full.code, vatNumber: full.code, legalForm: 'SRL', activityStartDate: '1998-04-01', dissolutionYear: null, foreignOwned: false, controllingEntity: 'Holding Test SPA' });
    expect(report!.identity.address).toEqual({ line1: 'Via Roma 1', line2: null, locality: 'Milano', postalCode: '20121', countryCode: 'IT' });
    expect(report!.ownership).toEqual({
      shareholders: [{ name: 'Holding Test SPA', share: 0.6 }, { name: 'Mario Rossi', share: 0.4 }],
      beneficialOwners: [{ name: 'Mario Rossi', share: 0.64 }],
      subsidiaries: [{ name: 'Sub Test SRL', share: 1 }],
    });
    expect(report!.officers.map((o) => o.roleCategory)).toEqual(['legal_representative', 'statutory_auditor', 'proxy']);
    expect(report!.branches).toHaveLength(2);
    expect(report!.branches[1]).toEqual({ legalName: 'Magazzino', address: null });
    expect(report!.stateAids).toEqual({ count: 3, countLast36Months: 1, amount: 120_000, amountLast36Months: 20_000 });
    expect(report!.registry).toEqual({ pec: 'test@pec.it', cciaa: 'MI', rea: 'MI-123456' });
  });

  it('when a credit report is asked then it has the id, shareholders and 5 years without metrics', async () => {
    const credit = await store.creditReport(full.code);
    expect(creditReportDataSchema.parse(credit)).toEqual(credit);
    const stored = await db('companies').where({ fiscal_code: full.code }).first();
    expect(credit!.id).toBe(String(stored.id));
    expect(credit!.ownership).toEqual([{ name: 'Holding Test SPA', share: 0.6 }, { name: 'Mario Rossi', share: 0.4 }]);
    expect(credit!.financials.map((f) => f.year)).toEqual([2025, 2024, 2023, 2022, 2021]);
    expect(credit!.financials[0]).not.toHaveProperty('metrics');
    expect(credit!.identity).not.toHaveProperty('activityStartDate');
    expect(credit!.identity.controllingEntity).toBe('Holding Test SPA');
  });

  it('when financials are asked then they carry id, consolidation, latest filed year, identity and latest', async () => {
    const financials = await store.companyFinancials(full.code);
    expect(companyFinancialsDataSchema.parse(financials)).toEqual(financials);
    expect(financials).toMatchObject({ isConsolidated: true, latestFiledYear: 2024, latest: { year: 2024 } });
  });

  it('when a company has nothing but a fiscal code then every field is present as null or []', async () => {
    const report = await store.companyReport(sparse);
    expect(companyReportDataSchema.parse(report)).toEqual(report);
    expect(report).toEqual({
      isConsolidated: false, latestFiledYear: null,
      identity: {
        legalName: null, legalForm: null, foundingYear: null, incorporationDate: null, isQuoted: null, vatNumber: null, fiscalCode: sparse,
        naceCode: null, naceSection: null, address: null, activityStartDate: null, dissolutionYear: null, foreignOwned: null, controllingEntity: null,
      },
      registry: null, headcount: null,
      risk: { protestsOfBill: null, insolvencyProceedings: null, insolvencyApplications: null, assetEncumbrances: null, officersWithRiskIndicators: null },
      stateAids: null, ownership: { shareholders: [], beneficialOwners: [], subsidiaries: [] }, officers: [], branches: [], latest: null, financials: [],
    });
    const credit = await store.creditReport(sparse);
    expect(creditReportDataSchema.parse(credit)).toMatchObject({ ownership: [], officers: [], financials: [], latest: null });
    const profile = await store.companyProfile(sparse);
    expect(companyProfileSmallSchema.parse(profile)).toEqual(profile);
    expect(profile).toMatchObject({ latest: null, risk: { stateAids: null, history: [], protestsOfBill: null } });
    expect(companyFinancialsDataSchema.parse(await store.companyFinancials(sparse))).toMatchObject({ latest: null, latestFiledYear: null });
  });
});

describe('company store: profile branches', () => {
  it('when the latest year has revenue over 50M and assets over 43M then the profile lists the 10 nearest peers of the division', async () => {
    const profile = await store.companyProfile(large);
    const parsed = companyProfileLargeSchema.parse(profile);
    expect(parsed).toEqual(profile);
    expect(profile).not.toHaveProperty('risk');
    // 14 peers with figures and one without, in division 34; the 04 company and itself excluded.
    expect(parsed.peerCount).toBe(15);
    expect(parsed.peers).toHaveLength(10);
    const revenueOf = new Map(peers.map((p) => [p.code, p.revenue]));
    const peerRevenues = parsed.peers.map((p) => revenueOf.get(p.identity.fiscalCode!));
    expect([...peerRevenues].sort((a, b) => a! - b!)).toEqual([50, 60, 70, 80, 90, 100, 110, 120, 130, 140].map((r) => r * M));
    const distances = peerRevenues.map((r) => Math.abs(r! - 100 * M));
    expect(distances).toEqual([...distances].sort((a, b) => a - b));
    expect(parsed.peers[0]).toMatchObject({ identity: { naceCode: '34.30' }, latest: { year: 2024, employees: 50 } });
    expect(parsed.peers.every((p) => /^\d+$/.test(p.id))).toBe(true);
  });

  it('when the company has 250 or more employees then it is large whatever its revenue', async () => {
    const profile = companyProfileLargeSchema.parse(await store.companyProfile(largeByEmployees));
    expect(profile.peerCount).toBe(1);
    expect(profile.peers.map((p) => p.identity.fiscalCode)).toEqual([notLarge]);
  });

  it('when a large company has no revenue on file then its peers are the nearest by headcount, not the division\'s smallest by revenue', async () => {
    // Division 67 does not exist in NACE Rev. 2: these are alone in it.
    const [company, near, nextNear, small, unknown] = [nextCode(), nextCode(), nextCode(), nextCode(), nextCode()];
    const employees = (n: number, revenue?: number) => years([{ year: 2024, employees: n, ...(revenue === undefined ? {} : { revenue }) }]);
    await upsertCompanies(db, [
      dossier(company, { naceCode: '67.00', years: employees(400) }),
      dossier(near, { naceCode: '67.00', years: employees(390) }),
      dossier(nextNear, { naceCode: '67.00', years: employees(420, 500 * M) }),
      dossier(small, { naceCode: '67.00', years: employees(10, 1 * M) }),
      dossier(unknown, { naceCode: '67.00' }),
    ]);
    const profile = companyProfileLargeSchema.parse(await store.companyProfile(company));
    expect(profile.latest).toMatchObject({ size: 'large', employees: 400 });
    expect(profile.peerCount).toBe(4);
    expect(profile.peers.map((p) => p.identity.fiscalCode)).toEqual([near, nextNear, small, unknown]);
  });

  it('when the figures are just over the thresholds by a fraction of a euro then the profile branch agrees with latest.size', async () => {
    // Imports now refuse cents; companies imported before kept them in the year's figures and
    // rounded them in the latest_* columns: 43,000,000.4 of assets is over the threshold in the
    // one and not in the other.
    const code = nextCode();
    await upsertCompanies(db, [dossier(code, { naceCode: '00.20', years: years([{ year: 2024, revenue: 50 * M + 1, totalAssets: 43 * M + 1, employees: 10 }]) })]);
    await db('companies').where({ fiscal_code: code }).update({ latest_total_assets: 43 * M });
    const profile = companyProfileLargeSchema.parse(await store.companyProfile(code));
    expect(profile.latest?.size).toBe('large');
    expect(profile).toHaveProperty('peers');
  });

  it('when revenue is over 50M but assets are not over 43M then the profile shows the risk summary', async () => {
    const profile = await store.companyProfile(notLarge);
    const parsed = companyProfileSmallSchema.parse(profile);
    expect(parsed).toEqual(profile);
    expect(profile).not.toHaveProperty('peers');
    expect(parsed.risk.stateAids).toEqual({ count: 2, amount: 5000 });
    expect(parsed.risk.history.map((h) => h.year)).toEqual([2024]);
  });

  it('when a company has many years then the profile history keeps the 5 newest', async () => {
    const profile = companyProfileSmallSchema.parse(await store.companyProfile(full.code));
    expect(profile.risk.history.map((h) => h.year)).toEqual([2025, 2024, 2023, 2022, 2021]);
    expect(profile.risk).toMatchObject({ assetEncumbrances: true, insolvencyApplications: null, stateAids: { count: 3, amount: 120_000 } });
  });
});

describe('company store: metric definitions', () => {
  it('when a metric is defined after the store loaded the definitions then a reload shows its name', async () => {
    const code = nextCode();
    const slug = `test_late_${code}`;
    await store.companyReport(full.code); // definitions are now cached
    await upsertCompanies(db, [dossier(code, { years: [{ year: 2024, metrics: [{ slug, value: 1, name: 'Late metric', categories: ['efficiency'], unit: 'days' }] }] })]);
    await store.reloadMetricDefinitions();
    const report = await store.companyReport(code);
    expect(report!.financials[0]!.metrics).toEqual([
      { slug, name: 'Late metric', categories: ['efficiency'], unit: 'days', value: 1, previousValue: null, yoyChange: null, marketValue: null, score: null },
    ]);
  });
});

describe('company store behind the cache: a metric redefined in the store', () => {
  it('when a metric\'s definition is corrected in the store (imports never redefine one) then, once companies_changed is heard, reports carry the new name, unit and categories', async () => {
    const code = nextCode();
    const slug = `test_renamed_${code}`;
    const metric = (name: string, unit: string | null, categories: 'ratio'[]) => ({ year: 2024, metrics: [{ slug, value: 1, name, categories, unit }] });
    await upsertCompanies(db, [dossier(code, { years: [metric('Old name', null, [])] })]);
    const own = createCompanyStore({ db, queryTimeoutMs: 2_000, logger });
    const listener = createNotificationListener({ connectionString: inject('databaseUrl'), logger });
    const cache = createCompanyCache({ store: own, notifications: listener });
    try {
      await listener.whenConnected();
      const named = async () => (await cache.companyReport(code))!.financials[0]!.metrics[0]!;
      expect(await named()).toMatchObject({ name: 'Old name', unit: null, categories: [] });
      await db('metric_definitions').where({ slug }).update({ name: 'New name', unit: 'ratio', categories: ['ratio'] });
      await expect.poll(named, { timeout: 5_000 }).toMatchObject({ name: 'New name', unit: 'ratio', categories: ['ratio'] });
    } finally {
      await listener.close();
    }
  });
});

describe('company store: lookup', () => {
  it('when the code is lower case then the company is found', async () => {
    expect((await store.companyReport(soleTrader.code.toLowerCase()))?.identity.fiscalCode).toBe(soleTrader.code);
    expect((await store.creditReport(soleTrader.code.toLowerCase()))?.identity.fiscalCode).toBe(soleTrader.code);
  });

  it('when the VAT number is given, with or without IT, then the company is found', async () => {
    for (const id of [soleTrader.vat, `IT${soleTrader.vat}`, `it${soleTrader.vat}`]) {
      expect((await store.companyProfile(id))?.identity.fiscalCode).toBe(soleTrader.code);
      expect((await store.companyFinancials(id))?.identity.vatNumber).toBe(soleTrader.vat);
    }
  });

  it('when several companies share a VAT number (a Gruppo IVA) then it finds the one with the lowest fiscal code, also after the other members are imported again', async () => {
    const [first, second, third] = [nextCode(), nextCode(), nextCode()];
    const shared = nextCode();
    await upsertCompanies(db, [second, first, third].map((code) => dossier(code, { vatNumber: shared, legalName: `Gruppo ${code}` })));
    for (let round = 0; round < 3; round++) {
      expect((await store.companyProfile(shared))?.identity.fiscalCode, `round ${round}`).toBe(first);
      expect((await store.companyFinancials(`IT${shared}`))?.identity.fiscalCode, `round ${round}`).toBe(first);
      // Each member by its own fiscal code.
      expect((await store.companyProfile(second))?.identity.fiscalCode).toBe(second);
      // A re-import moves the rows it writes.
      await upsertCompanies(db, [first, second].map((code) => dossier(code, { vatNumber: shared, legalName: `Gruppo ${code} ${round}` })));
    }
  });

  it('when no company matches then every method returns null', async () => {
    const unknown = nextCode();
    expect(await store.companyReport(unknown)).toBeNull();
    expect(await store.creditReport(unknown)).toBeNull();
    expect(await store.companyProfile(unknown)).toBeNull();
    expect(await store.companyFinancials(`IT${unknown}`)).toBeNull();
    expect(await store.companyFinancials(' ')).toBeNull();
  });
});

describe('company store: failures', () => {
  it('when a query outlasts the deadline then it fails with upstream_timeout and Postgres cancels it', async () => {
    // A schema whose `companies` is a view that sleeps, first on the search path: the store's
    // own SQL, slowed down, without locking anything other tests use.
    const schema = `slow_${randomBytes(4).toString('hex')}`;
    await db.raw(`CREATE SCHEMA ${schema}`);
    await db.raw(`CREATE VIEW ${schema}.companies AS SELECT c.* FROM public.companies c CROSS JOIN pg_sleep(5)`);
    const applicationName = `store-timeout-${schema}`;
    const url = new URL(inject('databaseUrl'));
    url.searchParams.set('options', `-c search_path=${schema},public`);
    const slowDb = createDb({ connectionString: url.toString(), poolMax: 2, applicationName });
    try {
      const slowStore = createCompanyStore({ db: slowDb, queryTimeoutMs: 200, logger });
      const started = Date.now();
      const failure = await slowStore.companyFinancials(full.code).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(AppError);
      expect(failure).toMatchObject({ code: 'upstream_timeout', message: errorCatalogue.upstream_timeout.message });
      expect(Date.now() - started).toBeLessThan(1_500);
      await expect.poll(async () => (await db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ? AND state = 'active'`, [applicationName])).rows[0].n, { timeout: 2_000 }).toBe(0);
    } finally {
      await slowDb.destroy();
      await db.raw(`DROP SCHEMA ${schema} CASCADE`);
    }
  });

  it('when the database cannot be reached then it fails with upstream_error, and the cause is only logged', async () => {
    const url = new URL(inject('databaseUrl'));
    url.pathname = `/no_such_database_${randomBytes(4).toString('hex')}`;
    const badDb = createDb({ connectionString: url.toString(), poolMax: 1 });
    try {
      const badStore = createCompanyStore({ db: badDb, queryTimeoutMs: 2_000, logger });
      logLines.length = 0;
      const failure = await badStore.companyReport(full.code).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(AppError);
      expect(failure).toMatchObject({ code: 'upstream_error', message: errorCatalogue.upstream_error.message });
      expect((failure as Error).message).not.toContain('no_such_database');
      expect(logLines.some((l) => l.includes('company store query failed') && l.includes('no_such_database'))).toBe(true);
    } finally {
      await badDb.destroy();
    }
  });
});
