// A read-through cache in front of a store that may be slow or down (Postgres for keys and
// entitlements). What it adds to a Map:
// - one load per key at a time, however many requests miss together (no stampede);
// - invalidation that also covers a load already in flight, so a change notified while we
//   were reading can never be cached as current;
// - a deadline on each load and, after a failure with no load answered meanwhile, a short pause
//   during which the store is not asked at all: requests answer at once from stale entries (or
//   fail fast) instead of each waiting for a dead server;
// - stale entries are kept after their trust expires, so callers may choose to serve them
//   while the store is unreachable;
// - refresh-ahead: a hit on an entry past `refreshAfter` of its trust is served at once and
//   reloaded in the background. Without it every busy key made its callers wait for the store
//   once per trust period (the plan-and-flags cache trusts for a second: each second, every
//   call of an active organization in flight queued behind one Postgres read). The trust still
//   bounds how old a served value can be;
// - optionally, for keys anyone may make up (API keys): negative entries kept apart from the
//   rest, and a bound on how many loads of keys not known to exist run at once. A flood of
//   made-up keys used to hold every pooled connection, time a lookup out and so pause the
//   store for everyone, and push verified keys out of the cache.

import { withinDeadline } from '../deadline/index.js';

export class StoreUnavailableError extends Error {
  constructor(cause?: unknown) {
    super('store unavailable', cause === undefined ? undefined : { cause });
    this.name = 'StoreUnavailableError';
  }
}

/** The store was not asked: the load got no turn in time among those of keys not known to exist. */
export class StoreBusyError extends StoreUnavailableError {
  constructor(cause: Error) {
    super(cause);
    this.name = 'StoreBusyError';
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
  /**
   * Whether a loaded value says the store has no such key. Such entries are kept apart, at most
   * `maxNegativeEntries` of them, so lookups of keys that do not exist never push out those that do.
   */
  isNegative?(value: V): boolean;
  maxNegativeEntries?: number;
  /**
   * Loads of keys with no entry, or only a negative one, run at most `concurrency` at once; the
   * rest wait their turn, at most `maxWaiting` of them and each at most `waitMs` (the lookup
   * deadline by default), and are then refused (StoreBusyError) without asking the store. The
   * wait is not the store's: it never pauses the store. Unset: no bound.
   */
  misses?: { concurrency: number; maxWaiting: number; waitMs?: number };
  now?: () => number;
}

export interface StoreBackedCache<V> {
  get(key: string): Promise<CacheRead<V>>;
  /** The cached value whatever its age, without asking the store. */
  peek(key: string): V | undefined;
  evict(key: string): void;
  /**
   * Reads the store now, not sharing a load already in flight (which may predate what the
   * caller needs to see), and keeps the answer as the key's value: a caller that acts on what it
   * read finds the same state on its next get, not an older one. A notification that evicts the
   * key meanwhile wins: the answer is returned but not kept.
   */
  reload(key: string): Promise<V>;
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
  const maxNegativeEntries = options.maxNegativeEntries ?? maxEntries;
  const refreshAfter = options.refreshAfter ?? 0.75;
  const isNegative = options.isNegative ?? (() => false);
  // Map order is age order in each.
  const entries = new Map<string, Entry<V>>();
  const negatives = new Map<string, Entry<V>>();
  const flights = new Map<string, Flight<V>>();
  const misses = options.misses ? createTurns(options.misses.concurrency, options.misses.maxWaiting, options.misses.waitMs ?? lookupTimeoutMs) : undefined;
  let storeDownUntil = 0;
  // How many loads the store has answered: a load that fails while another was answered says
  // the store is up, only that this one was slow or stuck (behind a full pool, a lock).
  let answered = 0;

  const entryOf = (key: string) => entries.get(key) ?? negatives.get(key);

  const remember = (key: string, value: V) => {
    entries.delete(key);
    negatives.delete(key);
    const [into, max] = isNegative(value) ? [negatives, maxNegativeEntries] : [entries, maxEntries];
    into.set(key, { value, loadedAt: now() });
    if (into.size > max) {
      const oldest = into.keys().next();
      if (!oldest.done) into.delete(oldest.value);
    }
  };

  const ask = (key: string): Promise<V> => {
    const answeredBefore = answered;
    return withDeadline(options.load(key), lookupTimeoutMs).then(
      (value) => {
        answered++;
        return value;
      },
      (err: unknown) => {
        if (answered === answeredBefore) storeDownUntil = now() + retryAfterFailureMs;
        throw err;
      },
    );
  };

  // A miss that waited its turn while the store went down fails at once rather than try it.
  const askInTurn = async (key: string): Promise<V> => {
    const release = await misses!.take();
    try {
      if (now() < storeDownUntil) throw new Error('store paused after a failure');
      return await ask(key);
    } finally {
      release();
    }
  };

  const loadOnce = (key: string): Promise<V> => {
    const existing = flights.get(key);
    if (existing) return existing.promise;
    const flight: Flight<V> = { invalidated: false, promise: undefined as unknown as Promise<V> };
    flight.promise = (misses && !entries.has(key) ? askInTurn(key) : ask(key))
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

  // A failed background reload rests the store as a failed read does (in ask); the entry stays,
  // trusted until its time runs out, then served stale (or not) by the caller's choice as before.
  const refreshAhead = (key: string) => {
    loadOnce(key).catch(() => {});
  };

  return {
    async get(key) {
      const entry = entryOf(key);
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
        // Re-read: the entry may have been evicted by a notification meanwhile.
        const fallback = entryOf(key);
        if (fallback) return { value: fallback.value, stale: true };
        if (err instanceof StoreBusyError) throw err;
        throw new StoreUnavailableError(err);
      }
    },
    peek: (key) => entryOf(key)?.value,
    evict(key) {
      entries.delete(key);
      negatives.delete(key);
      const flight = flights.get(key);
      if (flight) flight.invalidated = true;
    },
    reload(key) {
      const flight = flights.get(key);
      if (flight) {
        flight.invalidated = true;
        flights.delete(key);
      }
      return loadOnce(key);
    },
    markAllStale() {
      for (const entry of entries.values()) entry.loadedAt = Number.NEGATIVE_INFINITY;
      for (const entry of negatives.values()) entry.loadedAt = Number.NEGATIVE_INFINITY;
      for (const flight of flights.values()) flight.invalidated = true;
    },
    clear() {
      entries.clear();
      negatives.clear();
      for (const flight of flights.values()) flight.invalidated = true;
    },
    get size() {
      return entries.size + negatives.size;
    },
  };
}

const withDeadline = <T>(promise: Promise<T>, ms: number): Promise<T> => withinDeadline(ms, promise, () => new Error(`store lookup exceeded ${ms} ms`));

/**
 * At most `concurrency` holders at once, the others served in order of arrival. One that would
 * be waiter number `maxWaiting + 1`, or has waited `waitMs`, is refused with StoreBusyError: an
 * answer at once rather than a queue that only grows while lookups come faster than they end.
 */
function createTurns(concurrency: number, maxWaiting: number, waitMs: number) {
  let running = 0;
  const waiting: (() => void)[] = [];
  const release = () => {
    running--;
    const next = waiting.shift();
    if (next) next();
  };
  return {
    take(): Promise<() => void> {
      if (running < concurrency) {
        running++;
        return Promise.resolve(release);
      }
      if (waiting.length >= maxWaiting) return Promise.reject(new StoreBusyError(new Error(`${maxWaiting} lookups of unknown keys waiting already`)));
      return new Promise((resolve, reject) => {
        const turn = () => {
          clearTimeout(timer);
          running++;
          resolve(release);
        };
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(turn), 1);
          reject(new StoreBusyError(new Error(`no turn to ask the store within ${waitMs} ms`)));
        }, waitMs);
        waiting.push(turn);
      });
    },
  };
}
