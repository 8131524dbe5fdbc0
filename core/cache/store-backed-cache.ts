// A read-through cache in front of a store that may be slow or down (Postgres for keys and
// entitlements). What it adds to a Map:
// - one load per key at a time, however many requests miss together (no stampede);
// - invalidation that also covers a load already in flight, so a change notified while we
//   were reading can never be cached as current;
// - a deadline on each load and, after a failure, a short pause during which the store is not
//   asked at all: requests answer at once from stale entries (or fail fast) instead of each
//   waiting for a dead server;
// - stale entries are kept after their trust expires, so callers may choose to serve them
//   while the store is unreachable;
// - refresh-ahead: a hit on an entry past `refreshAfter` of its trust is served at once and
//   reloaded in the background. Without it every busy key made its callers wait for the store
//   once per trust period (the plan-and-flags cache trusts for a second: each second, every
//   call of an active organization in flight queued behind one Postgres read). The trust still
//   bounds how old a served value can be.

import { withinDeadline } from '../deadline/index.js';

export class StoreUnavailableError extends Error {
  constructor(cause?: unknown) {
    super('store unavailable', cause === undefined ? undefined : { cause });
    this.name = 'StoreUnavailableError';
  }
}

export interface CacheRead<V> {
  value: V;
  /** True when the store could not be asked and the value is past its trust. */
  stale: boolean;
}

export interface StoreBackedCacheOptions<V> {
  load(key: string): Promise<V>;
  /** How long a loaded value may be served without asking the store again (read on each use). */
  trustMs(value: V): number;
  lookupTimeoutMs?: number;
  retryAfterFailureMs?: number;
  /** Oldest entries are dropped beyond this, so random keys cannot grow memory without bound. */
  maxEntries?: number;
  /** Share of an entry's trust after which a hit also reloads it in the background (1: never). */
  refreshAfter?: number;
  now?: () => number;
}

export interface StoreBackedCache<V> {
  get(key: string): Promise<CacheRead<V>>;
  /** The cached value whatever its age, without asking the store. */
  peek(key: string): V | undefined;
  evict(key: string): void;
  /** Keep values (for use while the store is down) but revalidate each on its next use. */
  markAllStale(): void;
  clear(): void;
  readonly size: number;
}

interface Entry<V> {
  value: V;
  loadedAt: number;
}

interface Flight<V> {
  promise: Promise<V>;
  invalidated: boolean;
}

export function createStoreBackedCache<V>(options: StoreBackedCacheOptions<V>): StoreBackedCache<V> {
  const now = options.now ?? Date.now;
  const lookupTimeoutMs = options.lookupTimeoutMs ?? 1_000;
  const retryAfterFailureMs = options.retryAfterFailureMs ?? 1_000;
  const maxEntries = options.maxEntries ?? 100_000;
  const refreshAfter = options.refreshAfter ?? 0.75;
  const entries = new Map<string, Entry<V>>();
  const flights = new Map<string, Flight<V>>();
  let storeDownUntil = 0;

  const remember = (key: string, value: V) => {
    entries.delete(key); // re-insert at the end: Map order is our age order
    entries.set(key, { value, loadedAt: now() });
    if (entries.size > maxEntries) {
      const oldest = entries.keys().next();
      if (!oldest.done) entries.delete(oldest.value);
    }
  };

  const loadOnce = (key: string): Promise<V> => {
    const existing = flights.get(key);
    if (existing) return existing.promise;
    const flight: Flight<V> = { invalidated: false, promise: undefined as unknown as Promise<V> };
    flight.promise = withDeadline(options.load(key), lookupTimeoutMs)
      .then((value) => {
        if (!flight.invalidated) remember(key, value);
        return value;
      })
      .finally(() => {
        if (flights.get(key) === flight) flights.delete(key);
      });
    flights.set(key, flight);
    return flight.promise;
  };

  // A failed background reload rests the store as a failed read does; the entry stays, trusted
  // until its time runs out, then served stale (or not) by the caller's choice as before.
  const refreshAhead = (key: string) => {
    loadOnce(key).catch(() => {
      storeDownUntil = now() + retryAfterFailureMs;
    });
  };

  return {
    async get(key) {
      const entry = entries.get(key);
      if (entry) {
        const age = now() - entry.loadedAt;
        const trust = options.trustMs(entry.value);
        if (age < trust) {
          if (age >= trust * refreshAfter && !flights.has(key) && now() >= storeDownUntil) refreshAhead(key);
          return { value: entry.value, stale: false };
        }
      }
      if (now() < storeDownUntil) {
        if (entry) return { value: entry.value, stale: true };
        throw new StoreUnavailableError();
      }
      try {
        return { value: await loadOnce(key), stale: false };
      } catch (err) {
        storeDownUntil = now() + retryAfterFailureMs;
        // Re-read: the entry may have been evicted by a notification meanwhile.
        const fallback = entries.get(key);
        if (fallback) return { value: fallback.value, stale: true };
        throw new StoreUnavailableError(err);
      }
    },
    peek: (key) => entries.get(key)?.value,
    evict(key) {
      entries.delete(key);
      const flight = flights.get(key);
      if (flight) flight.invalidated = true;
    },
    markAllStale() {
      for (const entry of entries.values()) entry.loadedAt = Number.NEGATIVE_INFINITY;
      for (const flight of flights.values()) flight.invalidated = true;
    },
    clear() {
      entries.clear();
      for (const flight of flights.values()) flight.invalidated = true;
    },
    get size() {
      return entries.size;
    },
  };
}

const withDeadline = <T>(promise: Promise<T>, ms: number): Promise<T> => withinDeadline(ms, promise, () => new Error(`store lookup exceeded ${ms} ms`));
