import { describe, expect, it } from 'vitest';
import { createStoreBackedCache, StoreUnavailableError } from './store-backed-cache.js';

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
});
