import type { NotificationListener } from '../db/index.js';
import { LONGEST_IDENTIFIER, upperCaseIdentifier, type CompanyStore } from './company-store.js';
import type { CompanyLookupName } from './endpoint-catalogue.js';
import type { CompanyFinancialsData, CompanyProfileData, CompanyReportData, CreditReportData } from './schemas/index.js';

/** Sent by the triggers of migration 20261122_006 when an import commits. */
export const COMPANIES_CHANGED_CHANNEL = 'companies_changed';

/** What the cache holds: the four endpoints' answers, and beside them the dissolution year the
 * profile tool says (an uncached query per call took the tool from 63–94% of the API profile's
 * throughput to 34%). */
type CachedLookup = CompanyLookupName | 'companyDissolution';

export interface CompanyCacheOptions {
  store: CompanyStore;
  /** When given, a notification on `companies_changed` clears the cache, and nothing is cached
   * while the listener is disconnected (a change could go unheard). Without it (tests, tools
   * that import), only the TTLs bound staleness. */
  notifications?: NotificationListener;
  /** Entries per segment (small, large answers), across the four endpoints, found and not found. */
  maxEntries?: number;
  /** Bytes (JSON length: an entry is its JSON text) held by answers up to `largeEntryBytes`:
   * a financials, profile or credit-report answer is 0.5–2 KB, so the entry count alone
   * bounds little. */
  maxBytes?: number;
  /** Answers bigger than this (company reports, ~50 KB) go to a separate, smaller budget. */
  largeEntryBytes?: number;
  /** Approximate bytes held by large answers: enough for the popular reports. Kept small
   * because cached objects that are then evicted die in V8's old space: when lookups cycle
   * through more reports than fit, every miss evicts a 50 KB report, and the heap (RSS) grows
   * by about three times this budget before the collector catches up. Measured (npm run bench,
   * report pass, 2,000 codes round robin): API RSS peak ~256 MB at 8 MB, ~228 MB at 4 MB,
   * ~210 MB at 2 MB, with no loss of report throughput (the pass misses either way). 2 MB
   * still holds ~40 popular reports. */
  maxLargeBytes?: number;
  /** A large answer is kept only when its key missed already among the last this many large
   * misses (see `admitLarge`); 0 keeps every large answer on its first miss. */
  largeAdmissionWindow?: number;
  /** Backstop for a missed notification: no answer is served older than this. */
  ttlMs?: number;
  /** Share of `ttlMs` after which a hit on a found answer also reloads it in the background
   * (the caller is served the cached answer, never waits for the reload); each entry's point
   * falls at random between this and `refreshAfter + refreshJitter`. See `refreshAhead`. */
  refreshAfter?: number;
  refreshJitter?: number;
  /** Background reloads running at once, at most: they share the database pool with the
   * misses and the usage sink, which must not queue behind them. */
  maxRefreshes?: number;
  /** A company imported a moment ago shows up at most this late. */
  notFoundTtlMs?: number;
  now?: () => number;
  /** In [0, 1); for the refresh jitter. */
  random?: () => number;
}

export interface CompanyCache extends CompanyStore {
  /** The answer of one of the four lookups as its JSON text, what an HTTP response carries:
   * a hit costs no parse and no serialisation. */
  json(lookup: CompanyLookupName, code: string): Promise<string | null>;
  /** Drops everything, including loads already running (their results are not kept). */
  clear(): void;
  /** The JSON text of a value this cache returned (the text it holds), so a response can
   * splice it in instead of serialising the same answer again; undefined for anything else. */
  serialised(value: unknown): string | undefined;
  /** `refreshes`: background reloads started (see refreshAhead). */
  readonly stats: { entries: number; bytes: number; hits: number; misses: number; refreshes: number };
}

interface Entry {
  /** null: no such company (cached briefly). */
  text: string | null;
  /** The answer as a (frozen, shared) object, made from the text when an object caller first
   * asks: a process that only serves HTTP (the API) never holds object graphs. */
  value?: object;
  bytes: number;
  expiresAt: number;
  /** From here a hit also reloads it in the background (Infinity: not again). */
  refreshAt: number;
}

/** A load's answer: its JSON text, and the object the store assembled until a caller takes it. */
interface Loaded {
  value: object | null;
  text: string | null;
  /** Where it was kept, if it was. */
  entry?: Entry;
}

// What a cached entry costs beyond its JSON and its key: the entry, the Map slot.
const ENTRY_OVERHEAD_BYTES = 200;

// The answer for an identifier longer than any company's: never stored, so that a caller
// sending long made-up tax IDs cannot fill the cache with misses.
const NO_SUCH_COMPANY: Entry = Object.freeze({ text: null, bytes: 0, expiresAt: Infinity, refreshAt: Infinity });

/**
 * A read-through cache of the four endpoints' assembled `data`, keyed by endpoint and
 * normalised code, in front of the company store (same interface: routes and tools are
 * unchanged). The database round trip per request is what bounds the API's throughput, and
 * the answer for a code is the same for every caller until the next import.
 *
 * Why caching is safe: company data changes only by import (core/companies/write-companies.ts);
 * every import's commit notifies `companies_changed` (a trigger), which clears every process's
 * cache, and a load that started before the notification is not kept (generation check), so a
 * request that arrives after the notification never sees pre-import data. While the listener is
 * down nothing is cached; the TTL is the backstop if a notification is lost anyway. "Not found"
 * is cached only briefly, so a company being imported right now shows up quickly even without
 * a notification. Failures (upstream_error / upstream_timeout) are never cached.
 *
 * Entries are JSON text first: the API sends the text as it is (`json`). The object graph,
 * several times the JSON's size in V8's heap, is made only when an object caller (the tool
 * server) asks, and then kept with the text.
 */
export function createCompanyCache(options: CompanyCacheOptions): CompanyCache {
  const { store, notifications } = options;
  const maxEntries = options.maxEntries ?? 20_000;
  const maxBytes = options.maxBytes ?? 24 * 1024 * 1024;
  const largeEntryBytes = options.largeEntryBytes ?? 16 * 1024;
  const maxLargeBytes = options.maxLargeBytes ?? 2 * 1024 * 1024;
  // 1,024 keys of ~20 characters (~0.1 MB): a report asked again within the next 1,024 large
  // misses (about a second at the bench's rate) is kept; rounds over more reports never are.
  const largeAdmissionWindow = options.largeAdmissionWindow ?? 1024;
  const ttlMs = options.ttlMs ?? 60_000;
  const notFoundTtlMs = options.notFoundTtlMs ?? 5_000;
  const refreshAfter = options.refreshAfter ?? 0.75;
  const refreshJitter = options.refreshJitter ?? 0.2;
  const maxRefreshes = options.maxRefreshes ?? 2;
  const now = options.now ?? Date.now;
  const random = options.random ?? Math.random;

  // Two LRU segments, small and large answers. A Map iterates in insertion order: re-inserting
  // on a hit makes the first key the least recently used one.
  const small = createSegment(maxEntries, maxBytes);
  const large = createSegment(maxEntries, maxLargeBytes);
  // Concurrent misses for one key share one load.
  let loading = new Map<string, Promise<Loaded>>();
  let generation = 0;
  let hits = 0;
  let misses = 0;
  let refreshes = 0;
  let refreshing = 0;
  // Keyed by an object this cache handed out: the text it was made from or serialised to, for
  // as long as the caller holds the object.
  const texts = new WeakMap<object, string>();

  const clear = () => {
    generation += 1;
    small.clear();
    large.clear();
    largeMisses.clear();
    loading = new Map();
  };

  // An import changed company data, or a metric's name, unit or categories, which the store holds
  // apart from the cached answers: both are dropped, the definitions first, so no answer built
  // after the clear uses the old names (a slug the store already knew was never read again).
  const changed = () => {
    store.forgetMetricDefinitions();
    clear();
  };
  if (notifications) {
    notifications.subscribe(COMPANIES_CHANGED_CHANNEL, changed);
    // Disconnected: changes may go unheard, so drop what we hold; reconnected: the same, for
    // anything loaded in between.
    notifications.onConnectionChange(changed);
  }
  const mayKeep = () => !notifications || notifications.connected;

  // Keys of recent large misses, oldest first. Admission on a second miss, not the first: a
  // large answer (a ~50 KB report) that is cached and evicted before it is asked again
  // outlives V8's young generation and dies in old space, so a stream of one-off report
  // lookups (a client walking many companies, the bench's round robin over 2,000 codes) pushed
  // every report through old space, growing the heap between collections while saving no
  // store read. Answers asked for again soon are the ones worth holding; one-off ones now die
  // with their request.
  const largeMisses = new Set<string>();
  const admitLarge = (key: string): boolean => {
    if (largeAdmissionWindow <= 0 || largeMisses.delete(key)) return true;
    largeMisses.add(key);
    if (largeMisses.size > largeAdmissionWindow) largeMisses.delete(largeMisses.values().next().value as string);
    return false;
  };

  // `refreshed`: the reload of an entry already held, which passed admission when first kept.
  const keep = (key: string, text: string | null, refreshed: boolean): Entry | undefined => {
    const bytes = key.length + (text?.length ?? 0) + ENTRY_OVERHEAD_BYTES;
    const isLarge = bytes > largeEntryBytes;
    if (isLarge && !refreshed && !admitLarge(key)) return undefined;
    const t = now();
    // "Not found" is not refreshed ahead: it is short-lived so that a new company shows up
    // soon, and a caller who asks again after it expires waits for one indexed lookup.
    const refreshAt = text === null ? Infinity : t + ttlMs * (refreshAfter + refreshJitter * random());
    const entry: Entry = { text, bytes, expiresAt: t + (text === null ? notFoundTtlMs : ttlMs), refreshAt };
    (isLarge ? large : small).put(key, entry);
    return entry;
  };

  /** The cached entry, or the load every concurrent miss shares. */
  function lookup(name: CachedLookup, input: string): Entry | Promise<Loaded> {
    // The store upper-cases and trims too; an `IT`-prefixed VAT number gets its own entry.
    const identifier = upperCaseIdentifier(input.trim());
    if (identifier.length > LONGEST_IDENTIFIER) return NO_SUCH_COMPANY;
    const key = `${name}:${identifier}`;
    const t = now();
    const entry = small.get(key, t) ?? large.get(key, t);
    if (entry) {
      hits += 1;
      if (t >= entry.refreshAt) refreshAhead(name, input, key, entry);
      return entry;
    }
    const pending = loading.get(key);
    if (pending) return pending;
    misses += 1;
    return load(name, input, key, false);
  }

  function load(name: CachedLookup, input: string, key: string, refresh: boolean): Promise<Loaded> {
    const started = generation;
    const inFlight = loading;
    const promise = (store[name](input) as Promise<object | null>).then(
      (value): Loaded => {
        if (inFlight.get(key) === promise) inFlight.delete(key);
        const text = value === null ? null : JSON.stringify(value);
        // Cleared while loading: the value may predate the change that cleared it.
        const entry = started === generation && mayKeep() ? keep(key, text, refresh) : undefined;
        return { value, text, entry };
      },
      (err: unknown) => {
        if (inFlight.get(key) === promise) inFlight.delete(key);
        throw err;
      },
    );
    inFlight.set(key, promise);
    return promise;
  }

  // Refresh-ahead. Without it every entry is a miss once its TTL runs out, and entries filled
  // together expire together: after a restart or an import's clear, the traffic refills the
  // popular answers within seconds, and a minute later all of them miss at once, every
  // minute. Measured (npm run bench, 2,000 financials answers loaded in one pass): the slice
  // of load where they expired served half the calls of its neighbours, its callers queued
  // behind 2,000 reloads on the database pool. Now a hit on an entry past its jittered point
  // (75–95% of the TTL) serves it and reloads it in the background, at most `maxRefreshes` at
  // a time; callers wait only for entries nobody asked for lately. The TTL still bounds how
  // old a served answer can be. A failed reload is dropped: the entry expires at its TTL, and
  // the next caller's miss meets the error, as without refresh-ahead.
  function refreshAhead(name: CachedLookup, input: string, key: string, entry: Entry): void {
    if (refreshing >= maxRefreshes || loading.has(key)) return;
    entry.refreshAt = Infinity;
    refreshing += 1;
    refreshes += 1;
    load(name, input, key, true).then(
      () => (refreshing -= 1),
      () => (refreshing -= 1),
    );
  }

  const json = async (name: CompanyLookupName, input: string): Promise<string | null> => {
    const found = lookup(name, input);
    return found instanceof Promise ? (await found).text : found.text;
  };

  // Objects are shared between callers (the tool server's hot path: a parse per call cost it
  // a tenth of its CPU), so they are frozen: a caller that tried to modify one would fail
  // loudly instead of changing another caller's answer.
  const object = async (name: CachedLookup, input: string): Promise<object | null> => {
    const found = lookup(name, input);
    if (found instanceof Promise) {
      const loaded = await found;
      if (loaded.text === null) return null;
      const value = deepFreeze(loaded.value!);
      texts.set(value, loaded.text);
      if (loaded.entry) loaded.entry.value = value;
      return value;
    }
    if (found.text === null) return null;
    if (!found.value) {
      found.value = deepFreeze(JSON.parse(found.text) as object);
      texts.set(found.value, found.text);
    }
    return found.value;
  };

  return {
    companyReport: (fiscalCode) => object('companyReport', fiscalCode) as Promise<CompanyReportData | null>,
    creditReport: (fiscalCode) => object('creditReport', fiscalCode) as Promise<CreditReportData | null>,
    companyProfile: (taxId) => object('companyProfile', taxId) as Promise<CompanyProfileData | null>,
    companyFinancials: (taxId) => object('companyFinancials', taxId) as Promise<CompanyFinancialsData | null>,
    // Asked only for a company whose report may not hold every year (the metrics tool): not kept.
    companyHistory: (fiscalCode) => store.companyHistory(fiscalCode),
    companyDissolution: (taxId) => object('companyDissolution', taxId) as Promise<{ dissolutionYear: number | null } | null>,
    json,
    async reloadMetricDefinitions() {
      await store.reloadMetricDefinitions();
      clear(); // reports carry metric names
    },
    forgetMetricDefinitions: changed,
    metricDefinitions: (wanted) => store.metricDefinitions(wanted),
    clear,
    serialised: (value) => (value !== null && typeof value === 'object' ? texts.get(value) : undefined),
    get stats() {
      return { entries: small.entries.size + large.entries.size, bytes: small.bytes + large.bytes, hits, misses, refreshes };
    },
  };
}

/** One LRU of entries with an entry and a byte limit; an expired entry is a miss. */
function createSegment(maxEntries: number, maxBytes: number) {
  const entries = new Map<string, Entry>();
  let bytes = 0;
  const remove = (key: string, entry: Entry) => {
    entries.delete(key);
    bytes -= entry.bytes;
  };
  return {
    entries,
    get bytes() {
      return bytes;
    },
    get(key: string, now: number): Entry | undefined {
      const entry = entries.get(key);
      if (!entry) return undefined;
      remove(key, entry);
      if (entry.expiresAt <= now) return undefined;
      entries.set(key, entry);
      bytes += entry.bytes;
      return entry;
    },
    put(key: string, entry: Entry) {
      if (entry.bytes > maxBytes) return;
      const previous = entries.get(key);
      if (previous) remove(key, previous);
      entries.set(key, entry);
      bytes += entry.bytes;
      for (const [oldest, old] of entries) {
        if (entries.size <= maxEntries && bytes <= maxBytes) break;
        remove(oldest, old);
      }
    },
    clear() {
      entries.clear();
      bytes = 0;
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
