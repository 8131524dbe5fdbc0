import { describe, expect, it } from 'vitest';
import { createStoreBackedCache, StoreBusyError, StoreUnavailableError } from './store-backed-cache.js';

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

// A store that answers a key with itself while `up`, and throws while not; a clock the test sets.
function storeThatFails(trustMs: number) {
  const state = { clock: 0, up: true, loads: 0 };
  const cache = createStoreBackedCache<string>({
    now: () => state.clock,
    trustMs: () => trustMs,
    retryAfterFailureMs: 1_000,
    load: async (k) => {
      state.loads++;
      if (!state.up) throw new Error('down');
      return k;
    },
  });
  return Object.assign(state, { cache });
}

describe('store-backed cache', () => {
  it('when many requests miss together then the store is asked once', async () => {
    let loads = 0;
    const cache = createStoreBackedCache({ trustMs: () => 1_000, load: async (k) => (loads++, k.toUpperCase()) });
    const values = await Promise.all(Array.from({ length: 50 }, () => cache.get('a')));
    expect(loads).toBe(1);
    expect(values.every((v) => v.value === 'A' && !v.stale)).toBe(true);
  });

  it('when an entry is evicted during its load then the loaded value is returned but not cached', async () => {
    let loads = 0;
    const pending = deferred<string>();
    const cache = createStoreBackedCache({ trustMs: () => 60_000, load: () => (loads++ === 0 ? pending.promise : Promise.resolve('new')) });
    const first = cache.get('k');
    cache.evict('k'); // the change notification arrives while the read is in flight
    pending.resolve('old');
    expect((await first).value).toBe('old');
    expect((await cache.get('k')).value).toBe('new');
  });

  it('when a key is reloaded then the store is asked anew, not through a load already in flight, and the answer is what the next get finds; an eviction meanwhile wins', async () => {
    const answers = [deferred<string>(), deferred<string>(), deferred<string>()];
    let loads = 0;
    const cache = createStoreBackedCache({ trustMs: () => 60_000, load: () => answers[loads++]!.promise });
    const first = cache.get('k'); // in flight, read before what the caller needs
    const reloaded = cache.reload('k');
    expect(loads).toBe(2);
    answers[1]!.resolve('new');
    answers[0]!.resolve('old');
    expect(await reloaded).toBe('new');
    expect((await first).value).toBe('old');
    expect((await cache.get('k')).value).toBe('new'); // kept; the older load is not

    const again = cache.reload('k');
    cache.evict('k');
    answers[2]!.resolve('evicted meanwhile');
    expect(await again).toBe('evicted meanwhile');
    expect(cache.peek('k')).toBeUndefined();
  });

  it('when the store fails then a known entry is served stale and an unknown key fails, without asking again for a while', async () => {
    const store = storeThatFails(100);
    const { cache } = store;
    await cache.get('known');
    store.up = false;
    store.clock = 500;
    expect(await cache.get('known')).toEqual({ value: 'known', stale: true });
    const before = store.loads;
    expect(await cache.get('known')).toEqual({ value: 'known', stale: true });
    await expect(cache.get('unknown')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(store.loads).toBe(before); // inside the pause: nobody waits on a dead store
    store.up = true;
    store.clock = 1_600;
    expect(await cache.get('unknown')).toEqual({ value: 'unknown', stale: false });
  });

  it('when a trusted entry is past three quarters of its trust then it is served at once and reloaded in the background', async () => {
    let clock = 0;
    let loads = 0;
    const reload = deferred<string>();
    const cache = createStoreBackedCache({ now: () => clock, trustMs: () => 1_000, load: () => (loads++ === 0 ? Promise.resolve('old') : reload.promise) });
    await cache.get('k');
    clock = 749;
    await cache.get('k');
    expect(loads).toBe(1);
    clock = 750;
    // The reload hangs: the caller is answered anyway, and one reload serves every hit.
    expect(await cache.get('k')).toEqual({ value: 'old', stale: false });
    expect(await cache.get('k')).toEqual({ value: 'old', stale: false });
    expect(loads).toBe(2);
    reload.resolve('new');
    await new Promise((resolve) => setImmediate(resolve));
    clock = 1_400; // past the first load's trust, inside the reload's (loaded at 750)
    expect(await cache.get('k')).toEqual({ value: 'new', stale: false });
    expect(loads).toBe(2);
  });

  it('when a background reload fails then the entry is trusted until its time runs out and the store rests', async () => {
    const store = storeThatFails(1_000);
    const { cache } = store;
    await cache.get('known');
    store.up = false;
    store.clock = 800;
    expect(await cache.get('known')).toEqual({ value: 'known', stale: false });
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.loads).toBe(2);
    await expect(cache.get('unknown')).rejects.toBeInstanceOf(StoreUnavailableError);
    store.clock = 1_000;
    expect(await cache.get('known')).toEqual({ value: 'known', stale: true });
    expect(store.loads).toBe(2); // resting: nobody asked the dead store again
  });

  it('when the store does not answer within the deadline then the read fails as unavailable', async () => {
    const cache = createStoreBackedCache({ trustMs: () => 100, lookupTimeoutMs: 50, load: () => new Promise<string>(() => {}) });
    await expect(cache.get('k')).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('when entries are marked stale then each is revalidated on its next use', async () => {
    let version = 1;
    const cache = createStoreBackedCache({ trustMs: () => 60_000, load: async () => version });
    expect((await cache.get('k')).value).toBe(1);
    version = 2;
    expect((await cache.get('k')).value).toBe(1);
    cache.markAllStale();
    expect((await cache.get('k')).value).toBe(2);
  });

  it('when more keys than maxEntries are cached then the oldest are dropped', async () => {
    const cache = createStoreBackedCache({ trustMs: () => 60_000, maxEntries: 3, load: async (k) => k });
    for (const k of ['a', 'b', 'c', 'd']) await cache.get(k);
    expect(cache.size).toBe(3);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('d')).toBe('d');
  });

  it('when a load fails while another was answered then the store is not paused: the next key is asked', async () => {
    const slow = deferred<string>();
    let loads = 0;
    const cache = createStoreBackedCache({
      trustMs: () => 60_000,
      load: (k) => (loads++, k === 'stuck' ? slow.promise : Promise.resolve(k)),
    });
    const stuck = cache.get('stuck');
    expect((await cache.get('answered')).value).toBe('answered'); // the store answers meanwhile
    slow.reject(new Error('timed out behind a full pool'));
    await expect(stuck).rejects.toBeInstanceOf(StoreUnavailableError);
    expect((await cache.get('next')).value).toBe('next');
    expect(loads).toBe(3);
  });

  it('when keys are missed beyond the concurrency then the rest wait their turn, in order, and one that waits too long is refused as busy without pausing the store', async () => {
    let clock = 0;
    const running = new Map<string, ReturnType<typeof deferred<string | null>>>();
    const cache = createStoreBackedCache<string | null>({
      now: () => clock,
      trustMs: () => 60_000,
      lookupTimeoutMs: 10_000,
      isNegative: (v) => v === null,
      misses: { concurrency: 2, maxWaiting: 2, waitMs: 200 },
      load: (k) => {
        const d = deferred<string | null>();
        running.set(k, d);
        return d.promise;
      },
    });
    const tick = () => new Promise((resolve) => setImmediate(resolve));
    const a = cache.get('a');
    const b = cache.get('b');
    const c = cache.get('c');
    const d = cache.get('d');
    await tick();
    expect([...running.keys()]).toEqual(['a', 'b']);
    await expect(cache.get('e')).rejects.toBeInstanceOf(StoreBusyError); // a third would wait
    running.get('a')!.resolve(null);
    expect((await a).value).toBeNull();
    await tick();
    expect([...running.keys()]).toEqual(['a', 'b', 'c']);
    await expect(d).rejects.toBeInstanceOf(StoreBusyError); // b and c held the store for 200 ms
    clock = 1; // a refusal for want of a turn is not a failure of the store: no pause
    running.get('b')!.resolve('B');
    running.get('c')!.resolve(null);
    expect([(await b).value, (await c).value]).toEqual(['B', null]);
    const f = cache.get('f');
    await tick();
    expect(running.has('f')).toBe(true);
    running.get('f')!.resolve('F');
    expect((await f).value).toBe('F');
  });

  it('when all turns are taken then a key with a loaded entry is reloaded without waiting for one', async () => {
    let clock = 0;
    let knownLoads = 0;
    const asked: string[] = [];
    const cache = createStoreBackedCache<string>({
      now: () => clock,
      trustMs: () => 100,
      isNegative: () => false,
      misses: { concurrency: 1, maxWaiting: 10, waitMs: 1_000 },
      load: (k) => {
        asked.push(k);
        return k === 'known' ? Promise.resolve(`known ${++knownLoads}`) : new Promise<string>(() => {});
      },
    });
    expect((await cache.get('known')).value).toBe('known 1');
    void cache.get('unknown 1').catch(() => {});
    void cache.get('unknown 2').catch(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    clock = 500; // past its trust: reloaded, while unknown 1 holds the only turn
    expect(await cache.get('known')).toEqual({ value: 'known 2', stale: false });
    expect(asked).toEqual(['known', 'unknown 1', 'known']);
  });

  it('when more negative entries than maxNegativeEntries are cached then they push out only each other', async () => {
    const cache = createStoreBackedCache<string | null>({
      trustMs: () => 60_000,
      maxEntries: 3,
      isNegative: (v) => v === null,
      maxNegativeEntries: 2,
      load: async (k) => (k.startsWith('known') ? k : null),
    });
    for (const k of ['known a', 'known b']) await cache.get(k);
    for (let i = 0; i < 10; i++) await cache.get(`guess ${i}`);
    expect([cache.peek('known a'), cache.peek('known b')]).toEqual(['known a', 'known b']);
    expect(cache.peek('guess 7')).toBeUndefined();
    expect(cache.peek('guess 9')).toBeNull();
    expect(cache.size).toBe(4);
  });
});
