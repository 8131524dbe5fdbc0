import type { NotificationListener } from '../db/index.js';
import type { CompanyStore } from './company-store.js';

/** Sent by the triggers of migration 20261122_006 when an import commits. */
export const COMPANIES_CHANGED_CHANNEL = 'companies_changed';

export interface CompanyCacheOptions {
  store: CompanyStore;
  /** When given, a notification on `companies_changed` clears the cache, and nothing is cached
   * while the listener is disconnected (a change could go unheard). Without it (tests, tools
   * that import), only the TTLs bound staleness. */
  notifications?: NotificationListener;
  /** Entries across the four endpoints, found and not found. */
  maxEntries?: number;
  /** Approximate bytes held: a company report is ~50 KB, a financials answer ~0.5 KB, so the
   * entry count alone would not bound memory. */
  maxBytes?: number;
  /** Backstop for a missed notification. */
  ttlMs?: number;
  /** A company imported a moment ago shows up at most this late. */
  notFoundTtlMs?: number;
  now?: () => number;
}

export interface CompanyCache extends CompanyStore {
  /** Drops everything, including loads already running (their results are not kept). */
  clear(): void;
  readonly stats: { entries: number; bytes: number; hits: number; misses: number };
}

type Endpoint = 'report' | 'credit' | 'profile' | 'financials';

interface Entry {
  value: unknown;
  bytes: number;
  expiresAt: number;
}

// What a cached entry costs beyond its JSON: the key, the entry, the Map slot.
const ENTRY_OVERHEAD_BYTES = 200;

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
 * Cached values are shared between requests, so they are frozen: a caller that tried to modify
 * one would fail loudly instead of changing another caller's answer.
 */
export function createCompanyCache(options: CompanyCacheOptions): CompanyCache {
  const { store, notifications } = options;
  const maxEntries = options.maxEntries ?? 20_000;
  const maxBytes = options.maxBytes ?? 32 * 1024 * 1024;
  const ttlMs = options.ttlMs ?? 60_000;
  const notFoundTtlMs = options.notFoundTtlMs ?? 5_000;
  const now = options.now ?? Date.now;

  // A Map iterates in insertion order: re-inserting on a hit makes the first key the least
  // recently used one.
  const entries = new Map<string, Entry>();
  // Concurrent misses for one key share one load.
  let loading = new Map<string, Promise<unknown>>();
  let generation = 0;
  let bytes = 0;
  let hits = 0;
  let misses = 0;

  const clear = () => {
    generation += 1;
    entries.clear();
    loading = new Map();
    bytes = 0;
  };

  if (notifications) {
    notifications.subscribe(COMPANIES_CHANGED_CHANNEL, clear);
    // Disconnected: changes may go unheard, so drop what we hold; reconnected: the same, for
    // anything loaded in between.
    notifications.onConnectionChange(clear);
  }
  const mayKeep = () => !notifications || notifications.connected;

  const remove = (key: string, entry: Entry) => {
    entries.delete(key);
    bytes -= entry.bytes;
  };

  const keep = (key: string, value: unknown) => {
    const size = (value === null ? 0 : JSON.stringify(value).length) + ENTRY_OVERHEAD_BYTES;
    if (size > maxBytes) return;
    const previous = entries.get(key);
    if (previous) remove(key, previous);
    entries.set(key, { value: deepFreeze(value), bytes: size, expiresAt: now() + (value === null ? notFoundTtlMs : ttlMs) });
    bytes += size;
    for (const [oldest, entry] of entries) {
      if (entries.size <= maxEntries && bytes <= maxBytes) break;
      remove(oldest, entry);
    }
  };

  function read<T>(endpoint: Endpoint, input: string, load: (input: string) => Promise<T | null>): Promise<T | null> {
    // The store upper-cases and trims too; an `IT`-prefixed VAT number gets its own entry.
    const key = `${endpoint}:${input.trim().toUpperCase()}`;
    const entry = entries.get(key);
    if (entry) {
      if (entry.expiresAt > now()) {
        hits += 1;
        entries.delete(key);
        entries.set(key, entry);
        return Promise.resolve(entry.value as T | null);
      }
      remove(key, entry);
    }
    const pending = loading.get(key);
    if (pending) return pending as Promise<T | null>;

    misses += 1;
    const started = generation;
    const inFlight = loading;
    const promise = load(input).then(
      (value) => {
        if (inFlight.get(key) === promise) inFlight.delete(key);
        // Cleared while loading: the value may predate the change that cleared it.
        if (started === generation && mayKeep()) keep(key, value);
        return value;
      },
      (err: unknown) => {
        if (inFlight.get(key) === promise) inFlight.delete(key);
        throw err;
      },
    );
    inFlight.set(key, promise);
    return promise;
  }

  return {
    companyReport: (fiscalCode) => read('report', fiscalCode, (code) => store.companyReport(code)),
    creditReport: (fiscalCode) => read('credit', fiscalCode, (code) => store.creditReport(code)),
    companyProfile: (taxId) => read('profile', taxId, (code) => store.companyProfile(code)),
    companyFinancials: (taxId) => read('financials', taxId, (code) => store.companyFinancials(code)),
    async reloadMetricDefinitions() {
      await store.reloadMetricDefinitions();
      clear(); // reports carry metric names
    },
    clear,
    get stats() {
      return { entries: entries.size, bytes, hits, misses };
    },
  };
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
