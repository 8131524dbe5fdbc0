import { afterAll, describe, expect, inject, it } from 'vitest';
import { createNotificationListener, type ConnectionHandler, type NotificationHandler, type NotificationListener } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { createLogger } from '../logging/index.js';
import { testDb } from '../../test/support/database.js';
import { dossier, fiscalCodes } from '../../test/support/company-dossiers.js';
import { COMPANIES_CHANGED_CHANNEL, createCompanyCache } from './company-cache.js';
import { createCompanyStore, type CompanyStore } from './company-store.js';
import type { CompanyFinancialsData } from './schemas/index.js';
import { upsertCompanies } from './write-companies.js';

// A store whose answers the test controls: `data[code]` (undefined = not found), counting reads.
function fakeStore() {
  const data = new Map<string, { name: string; padding?: string }>();
  const reads: string[] = [];
  let failWith: unknown;
  let gate: Promise<void> | undefined;
  const read = async (code: string) => {
    reads.push(code);
    if (gate) await gate;
    if (failWith) throw failWith;
    const found = data.get(code.trim().toUpperCase());
    return found ? { ...found } : null;
  };
  const store = {
    companyReport: read,
    creditReport: read,
    companyProfile: read,
    companyFinancials: read,
    companyDissolution: read,
    reloadMetricDefinitions: async () => {},
    forgetMetricDefinitions: () => {},
  } as unknown as CompanyStore;
  return {
    store,
    data,
    reads,
    fail: (err: unknown) => { failWith = err; },
    hold: () => {
      let release!: () => void;
      gate = new Promise((resolve) => { release = resolve; });
      return () => { gate = undefined; release(); };
    },
  };
}

// Lets background reloads (promise chains of a few steps) run to their end.
const settled = () => new Promise<void>((resolve) => setImmediate(resolve));

function fakeListener(connected = true) {
  const handlers = new Map<string, NotificationHandler>();
  const connectionHandlers: ConnectionHandler[] = [];
  const listener = {
    connected,
    subscribe: (channel: string, handler: NotificationHandler) => handlers.set(channel, handler),
    onConnectionChange: (handler: ConnectionHandler) => connectionHandlers.push(handler),
    whenConnected: async () => {},
    close: async () => {},
  };
  return {
    listener: listener as NotificationListener,
    notify: (channel: string) => handlers.get(channel)?.(''),
    setConnected: (value: boolean) => {
      listener.connected = value;
      for (const handler of connectionHandlers) handler(value);
    },
  };
}

describe('company cache', () => {
  it('when a code is asked twice, in either case, then the store is read once and both answers are equal', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store });
    expect(await cache.companyFinancials('abc')).toEqual({ name: 'one' });
    expect(await cache.companyFinancials(' ABC ')).toEqual({ name: 'one' });
    expect(fake.reads).toHaveLength(1);
    expect(cache.stats).toMatchObject({ hits: 1, misses: 1, entries: 1 });
  });

  it('when two endpoints ask for one code then each has its own entry', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store });
    await cache.companyFinancials('ABC');
    await cache.companyReport('ABC');
    await cache.creditReport('ABC');
    await cache.companyProfile('ABC');
    expect(fake.reads).toHaveLength(4);
  });

  it('when the profile tool asks for a company\'s dissolution again then it is held beside the profile, not read per call', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store });
    await cache.companyProfile('ABC');
    const first = await cache.companyDissolution('abc');
    expect(await cache.companyDissolution('ABC')).toEqual(first);
    expect(fake.reads).toHaveLength(2);
  });

  it('when many requests miss on one code at once then they share one store read', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const release = fake.hold();
    const cache = createCompanyCache({ store: fake.store });
    const answers = Promise.all(Array.from({ length: 20 }, () => cache.companyReport('abc')));
    release();
    const all = await answers;
    expect(all.every((a) => a === all[0])).toBe(true);
    expect(all[0]).toEqual({ name: 'one' });
    expect(fake.reads).toHaveLength(1);
  });

  it('when an identifier is longer than any company\'s then it is no company, without reading the store or keeping an entry', async () => {
    const fake = fakeStore();
    const cache = createCompanyCache({ store: fake.store });
    // Spaces around it do not count, as at lookup: 16 characters is a codice fiscale's length.
    expect(await cache.companyProfile(`  ${'A'.repeat(17)}  `)).toBeNull();
    expect(await cache.json('companyFinancials', 'B'.repeat(16_000))).toBeNull();
    expect(fake.reads).toEqual([]);
    expect(cache.stats).toMatchObject({ entries: 0, bytes: 0 });
    expect(await cache.companyProfile(` ${'A'.repeat(16)} `)).toBeNull();
    expect(fake.reads).toEqual([` ${'A'.repeat(16)} `]);
  });

  it('when misses are kept then their keys count against the byte budget', async () => {
    const fake = fakeStore();
    const [short, long] = [createCompanyCache({ store: fake.store }), createCompanyCache({ store: fake.store })];
    await short.companyProfile('A');
    await long.companyProfile('A'.repeat(16));
    expect(long.stats.bytes - short.stats.bytes).toBe(15);
  });

  it('when a company is not found then that is remembered only for the not-found TTL', async () => {
    let t = 0;
    const fake = fakeStore();
    const cache = createCompanyCache({ store: fake.store, notFoundTtlMs: 5_000, ttlMs: 60_000, now: () => t });
    expect(await cache.companyFinancials('NEW')).toBeNull();
    fake.data.set('NEW', { name: 'imported' });
    t = 4_999;
    expect(await cache.companyFinancials('NEW')).toBeNull();
    t = 5_000;
    expect(await cache.companyFinancials('NEW')).toEqual({ name: 'imported' });
    expect(fake.reads).toHaveLength(2);
  });

  it('when an entry is older than the TTL then it is read again', async () => {
    let t = 0;
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store, ttlMs: 60_000, now: () => t });
    await cache.companyFinancials('ABC');
    fake.data.set('ABC', { name: 'two' });
    t = 59_999;
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    t = 60_000;
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'two' });
  });

  it('when a found entry passes its refresh point then a hit serves it at once and reloads it in the background', async () => {
    let t = 0;
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    // random 0: the refresh point is at 75% of the TTL.
    const cache = createCompanyCache({ store: fake.store, ttlMs: 60_000, now: () => t, random: () => 0 });
    await cache.companyFinancials('ABC');
    fake.data.set('ABC', { name: 'two' });
    t = 44_999;
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    expect(fake.reads).toHaveLength(1);

    t = 45_000;
    const release = fake.hold(); // the reload hangs: callers must not wait for it
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    expect(fake.reads).toHaveLength(2); // one reload, not one per hit
    release();
    await settled();
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'two' });
    // The reloaded entry lives a TTL from its reload: past the first one's expiry, still no read.
    t = 89_999;
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'two' });
    expect(fake.reads).toHaveLength(2);
    expect(cache.stats).toMatchObject({ misses: 1, refreshes: 1 });
  });

  it('when entries are loaded together then their refresh points are spread over 75–95% of the TTL', async () => {
    let t = 0;
    const fake = fakeStore();
    for (const code of ['A', 'B']) fake.data.set(code, { name: code });
    const draws = [0, 0.999];
    const cache = createCompanyCache({ store: fake.store, ttlMs: 60_000, now: () => t, random: () => draws.shift()! });
    await cache.companyFinancials('A'); // refresh at 45,000
    await cache.companyFinancials('B'); // refresh at 56,988
    t = 56_000;
    await cache.companyFinancials('A');
    await cache.companyFinancials('B');
    await settled();
    expect(fake.reads).toEqual(['A', 'B', 'A']);
  });

  it('when many entries pass their refresh point at once then at most maxRefreshes reload at a time', async () => {
    let t = 0;
    const fake = fakeStore();
    for (const code of ['A', 'B', 'C']) fake.data.set(code, { name: code });
    const cache = createCompanyCache({ store: fake.store, ttlMs: 60_000, now: () => t, random: () => 0, maxRefreshes: 2 });
    for (const code of ['A', 'B', 'C']) await cache.companyFinancials(code);
    t = 50_000;
    const release = fake.hold();
    for (const code of ['A', 'B', 'C']) expect(await cache.companyFinancials(code)).toEqual({ name: code });
    expect(fake.reads).toEqual(['A', 'B', 'C', 'A', 'B']);
    release();
    await settled();
    // C's turn comes with its next hit, once a reload has finished.
    await cache.companyFinancials('C');
    await settled();
    expect(fake.reads).toEqual(['A', 'B', 'C', 'A', 'B', 'C']);
  });

  it('when a background reload fails then the entry is served until its TTL and the next miss meets the error', async () => {
    let t = 0;
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store, ttlMs: 60_000, now: () => t, random: () => 0 });
    await cache.companyFinancials('ABC');
    fake.fail(new AppError('upstream_timeout'));
    t = 45_000;
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    await settled();
    t = 59_999;
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    expect(fake.reads).toHaveLength(2); // no reload storm after the failure
    t = 60_000;
    await expect(cache.companyFinancials('ABC')).rejects.toMatchObject({ code: 'upstream_timeout' });
  });

  it('when a large answer is reloaded in the background then it stays cached without being admitted again', async () => {
    let t = 0;
    const fake = fakeStore();
    fake.data.set('R1', { name: 'R1', padding: 'x'.repeat(20_000) });
    const cache = createCompanyCache({ store: fake.store, ttlMs: 60_000, now: () => t, random: () => 0, largeEntryBytes: 16_000, largeAdmissionWindow: 2 });
    await cache.companyReport('R1');
    await cache.companyReport('R1'); // admitted on its second miss
    t = 45_000;
    await cache.companyReport('R1');
    await settled();
    t = 89_999; // past the first load's expiry, before the reload's refresh point
    await cache.companyReport('R1');
    expect(fake.reads).toHaveLength(3);
    expect(cache.stats.entries).toBe(1);
  });

  it('when companies change during a background reload then the reloaded answer is not kept', async () => {
    let t = 0;
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'old' });
    const { listener, notify } = fakeListener();
    const cache = createCompanyCache({ store: fake.store, notifications: listener, ttlMs: 60_000, now: () => t, random: () => 0 });
    await cache.companyFinancials('ABC');
    t = 45_000;
    const release = fake.hold();
    await cache.companyFinancials('ABC'); // starts the reload, which reads 'old'
    notify(COMPANIES_CHANGED_CHANNEL);
    release();
    await settled();
    fake.data.set('ABC', { name: 'new' });
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'new' });
    expect(fake.reads).toHaveLength(3);
  });

  it('when the store fails then the error reaches every waiting caller and is not cached', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store });
    fake.fail(new AppError('upstream_timeout'));
    const release = fake.hold();
    const both = Promise.allSettled([cache.companyFinancials('ABC'), cache.companyFinancials('ABC')]);
    release();
    const settled = await both;
    for (const s of settled) expect(s).toMatchObject({ status: 'rejected', reason: { code: 'upstream_timeout' } });
    fake.fail(undefined);
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    expect(fake.reads).toHaveLength(2);
  });

  it('when there are more entries than allowed then the least recently used goes first', async () => {
    const fake = fakeStore();
    for (const code of ['A', 'B', 'C']) fake.data.set(code, { name: code });
    const cache = createCompanyCache({ store: fake.store, maxEntries: 2 });
    await cache.companyFinancials('A');
    await cache.companyFinancials('B');
    await cache.companyFinancials('A'); // A is now the most recent
    await cache.companyFinancials('C'); // evicts B
    fake.reads.length = 0;
    await cache.companyFinancials('A');
    await cache.companyFinancials('C');
    expect(fake.reads).toEqual([]);
    await cache.companyFinancials('B');
    expect(fake.reads).toEqual(['B']);
  });

  it('when an answer is served from the cache then its JSON text is the one made when it was loaded', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'Caffè "Roma"', padding: '«»\u2028' });
    const cache = createCompanyCache({ store: fake.store });
    const loaded = await cache.companyFinancials('ABC');
    const hit = await cache.companyFinancials('abc');
    expect(hit).toBe(loaded);
    expect(cache.serialised(hit)).toBe(JSON.stringify(loaded));
    expect(await cache.json('companyFinancials', 'abc')).toBe(JSON.stringify(loaded));
    expect(cache.serialised({ name: 'not from the cache' })).toBeUndefined();
    expect(cache.serialised(null)).toBeUndefined();
  });

  it('when entries would exceed the byte budget then old ones are evicted to stay under it', async () => {
    const fake = fakeStore();
    for (const code of ['A', 'B', 'C', 'D']) fake.data.set(code, { name: code, padding: 'x'.repeat(10_000) });
    const cache = createCompanyCache({ store: fake.store, maxBytes: 25_000 });
    for (const code of ['A', 'B', 'C', 'D']) await cache.companyReport(code);
    expect(cache.stats.entries).toBe(2);
    expect(cache.stats.bytes).toBeLessThanOrEqual(25_000);
    fake.reads.length = 0;
    await cache.companyReport('D');
    await cache.companyReport('A');
    expect(fake.reads).toEqual(['A']);
  });

  it('when large answers exceed their own budget then they evict each other, never the small ones', async () => {
    const fake = fakeStore();
    fake.data.set('SMALL', { name: 'small' });
    for (const code of ['R1', 'R2', 'R3']) fake.data.set(code, { name: code, padding: 'x'.repeat(20_000) });
    const cache = createCompanyCache({ store: fake.store, largeEntryBytes: 16_000, maxLargeBytes: 45_000, maxBytes: 10_000, largeAdmissionWindow: 0 });
    await cache.companyFinancials('SMALL');
    for (const code of ['R1', 'R2', 'R3']) await cache.companyReport(code);
    expect(cache.stats.entries).toBe(3);
    fake.reads.length = 0;
    await cache.companyFinancials('SMALL');
    await cache.companyReport('R3');
    await cache.companyReport('R2');
    expect(fake.reads).toEqual([]);
    await cache.companyReport('R1');
    expect(fake.reads).toEqual(['R1']);
  });

  it('when a large answer is asked once then it is not kept, and when asked again soon after then it is', async () => {
    const fake = fakeStore();
    for (const code of ['R1', 'R2', 'R3', 'R4']) fake.data.set(code, { name: code, padding: 'x'.repeat(20_000) });
    const cache = createCompanyCache({ store: fake.store, largeEntryBytes: 16_000, largeAdmissionWindow: 2 });
    await cache.companyReport('R1');
    expect(cache.stats.entries).toBe(0);
    await cache.companyReport('R1');
    expect(cache.stats.entries).toBe(1);
    fake.reads.length = 0;
    const answer = await cache.companyReport('R1');
    expect(fake.reads).toEqual([]);
    expect(cache.serialised(answer)).toBe(JSON.stringify(answer));
    // A round over more reports than the window (two keys) never keeps any of them.
    for (const code of ['R2', 'R3', 'R4', 'R2', 'R3', 'R4']) await cache.companyReport(code);
    expect(cache.stats.entries).toBe(1);
  });

  it('when companies change during a load then the caller gets its answer but it is not kept', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'old' });
    const { listener, notify } = fakeListener();
    const cache = createCompanyCache({ store: fake.store, notifications: listener });
    const release = fake.hold();
    const before = cache.companyFinancials('ABC');
    notify(COMPANIES_CHANGED_CHANNEL);
    // A request after the notification does not join the load that began before it.
    const after = cache.companyFinancials('ABC');
    fake.data.set('ABC', { name: 'new' });
    release();
    await before;
    expect(await after).toEqual({ name: 'new' });
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'new' });
    expect(fake.reads).toHaveLength(2);
  });

  it('when companies change then every entry is dropped', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'old' });
    const { listener, notify } = fakeListener();
    const cache = createCompanyCache({ store: fake.store, notifications: listener });
    await cache.companyFinancials('ABC');
    await cache.companyFinancials('MISSING');
    fake.data.set('ABC', { name: 'new' });
    fake.data.set('MISSING', { name: 'imported' });
    notify(COMPANIES_CHANGED_CHANNEL);
    expect(cache.stats.entries).toBe(0);
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'new' });
    expect(await cache.companyFinancials('MISSING')).toEqual({ name: 'imported' });
  });

  it('when the listener is disconnected then nothing is cached, and what was cached is dropped', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const { listener, setConnected } = fakeListener();
    const cache = createCompanyCache({ store: fake.store, notifications: listener });
    await cache.companyFinancials('ABC');
    setConnected(false);
    expect(cache.stats.entries).toBe(0);
    await cache.companyFinancials('ABC');
    await cache.companyFinancials('ABC');
    expect(fake.reads).toHaveLength(3);
    setConnected(true);
    await cache.companyFinancials('ABC');
    await cache.companyFinancials('ABC');
    expect(fake.reads).toHaveLength(4);
  });

  it('when a caller tries to modify a cached answer then it fails instead of changing the next caller\'s answer', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store });
    const loaded = (await cache.companyFinancials('ABC')) as unknown as { name: string };
    expect(() => { loaded.name = 'changed'; }).toThrow(TypeError);
    await cache.json('companyFinancials', 'ABC');
    const cached = (await cache.companyFinancials('ABC')) as unknown as { name: string };
    expect(() => { cached.name = 'changed'; }).toThrow(TypeError);
    expect(await cache.companyFinancials('ABC')).toEqual({ name: 'one' });
    expect(await cache.json('companyFinancials', 'ABC')).toBe('{"name":"one"}');
  });

  it('when an answer was first asked as text then an object caller gets it parsed once, and shared', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'one' });
    const cache = createCompanyCache({ store: fake.store });
    expect(await cache.json('companyReport', 'ABC')).toBe('{"name":"one"}');
    const first = await cache.companyReport('ABC');
    expect(first).toEqual({ name: 'one' });
    expect(await cache.companyReport('abc')).toBe(first);
    expect(fake.reads).toHaveLength(1);
  });

  it('when the answer is asked as JSON text then a hit reads no store and a missing company is null', async () => {
    const fake = fakeStore();
    fake.data.set('ABC', { name: 'Caffè "Roma"' });
    const cache = createCompanyCache({ store: fake.store });
    expect(await cache.json('companyProfile', 'abc')).toBe(JSON.stringify({ name: 'Caffè "Roma"' }));
    expect(await cache.json('companyProfile', 'ABC')).toBe(JSON.stringify({ name: 'Caffè "Roma"' }));
    expect(await cache.json('companyProfile', 'NOPE')).toBeNull();
    expect(await cache.json('companyProfile', 'NOPE')).toBeNull();
    expect(fake.reads).toEqual(['abc', 'NOPE']);
  });
});

describe('company cache with Postgres', () => {
  const db = testDb({ applicationName: 'company-cache.test' });
  const logger = createLogger({ level: 'silent' });
  const listener = createNotificationListener({ connectionString: inject('databaseUrl'), logger });
  afterAll(async () => {
    await listener.close();
    await db.destroy();
  });

  it('when an import commits then a cache in another process drops the old answer within a second', async () => {
    const code = fiscalCodes()();
    await upsertCompanies(db, [dossier(code, { legalName: 'Before Import SRL' })]);
    const cache = createCompanyCache({ store: createCompanyStore({ db, queryTimeoutMs: 2_000, logger }), notifications: listener });
    await listener.whenConnected();
    const legalName = (data: CompanyFinancialsData | null) => JSON.stringify(data).includes('After Import SRL') ? 'after' : 'before';

    expect(legalName(await cache.companyFinancials(code))).toBe('before');
    expect(legalName(await cache.companyFinancials(code))).toBe('before');
    const hitsBefore = cache.stats.hits;
    expect(hitsBefore).toBeGreaterThan(0);

    await upsertCompanies(db, [dossier(code, { legalName: 'After Import SRL' })]);
    const until = Date.now() + 1_000;
    let seen = 'before';
    while (Date.now() < until && seen === 'before') {
      seen = legalName(await cache.companyFinancials(code));
      if (seen === 'before') await new Promise((r) => setTimeout(r, 20));
    }
    expect(seen).toBe('after');
  });
});
