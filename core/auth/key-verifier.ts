import type { Principal } from '../access/access-control.js';
import { createStoreBackedCache, StoreBusyError, StoreUnavailableError } from '../cache/index.js';
import { createNotificationListener, retryOnDroppedConnection, type Db, type NotificationListener } from '../db/index.js';
import { AppError } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { hashApiKey, isApiKeyShaped, type KeyKind, type KeyMode } from './api-key-format.js';
import { notKeyShaped, refusedKey } from './key-refusal.js';
import { createLastUsedRecorder } from './last-used-recorder.js';
import { bearerToken } from './parse-authorization.js';

export interface KeyVerifier {
  /** The bearer key's principal, or AppError missing_api_key / invalid_api_key / auth_unavailable. */
  verify(authorization: string | undefined): Promise<Principal>;
  /** Resolves once revocations are being heard (readiness, tests). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

export interface KeyVerifierOptions {
  db: Db;
  logger: Logger;
  /** KEY_CACHE_TTL_MS: how long a verified key is trusted; the backstop behind notifications. */
  ttlMs: number;
  /** Opens a LISTEN connection of its own... */
  listenConnectionString?: string;
  /** ...or shares one (createAccessControl does). One of the two is required. */
  notifications?: NotificationListener;
  /** Unknown keys are remembered this long: blunts guessing, delays a brand-new key at most this. */
  negativeTtlMs?: number;
  /** Trust while the LISTEN connection is down and revocations may go unheard. */
  disconnectedTtlMs?: number;
  lastUsedFlushMs?: number;
  lookupTimeoutMs?: number;
  /** Verified keys kept in the cache (the oldest dropped beyond). */
  maxCachedKeys?: number;
  /** Unknown keys remembered, apart from verified ones, so that guessing cannot push those out. */
  maxCachedUnknownKeys?: number;
  /**
   * Lookups of keys not cached as verified that may ask Postgres at once (default: a third of
   * the pool, rounded up); others wait their turn, so a flood of made-up keys holds that many
   * pooled connections at most, and the rest of the pool serves the calls of keys verified.
   */
  concurrentUnknownKeyLookups?: number;
  now?: () => number;
}

// A few of the pool's connections (DATABASE_POOL_MAX, 10 by default: 4): a key lookup is one
// indexed read, a millisecond or so, so a few at once check thousands of new keys a second.
const concurrentLookupsFor = (db: Db): number => {
  const poolMax = db.client.config.pool?.max;
  return Math.ceil((typeof poolMax === 'number' ? poolMax : 10) / 3);
};
// A lookup waits its turn this long at most, then is answered auth_unavailable. Longer than the
// lookup's own deadline: a customer's new key caught in a flood is better answered late than
// refused, and while it waits, so does each flooding connection (a refusal at once would only
// have it send the next key sooner). A store that is down still fails them at once (their turn
// comes as the lookups in progress time out, and finds the store paused).
const UNKNOWN_KEY_LOOKUP_WAIT_MS = 3_000;
// Beyond this many waiting, a lookup is refused at once: they would not get a turn in time.
const MAX_WAITING_UNKNOWN_KEY_LOOKUPS = 1_000;

interface StoredKey {
  id: string;
  organizationId: string;
  kind: KeyKind;
  mode: KeyMode;
  expiresAt: number | null;
  /** Kept, as the row is read anyway, so a refusal can say when (key-refusal.ts). */
  revokedAt: number | null;
}

/**
 * Verifies bearer keys with an in-process cache, so the hot path is a SHA-256 and a Map read.
 * - Revocation: the api_keys trigger NOTIFYs `api_key_changed` with the hash; every process
 *   evicts it at once (well under a second). The TTL bounds staleness if a notification were
 *   missed; while the LISTEN connection is down trust shrinks to `disconnectedTtlMs`, and on
 *   reconnect everything cached is revalidated on its next use.
 * - Expiry is checked on every use against the cached expires_at: no store round trip.
 * - Postgres unreachable: keys verified before keep working, even past their TTL, until the
 *   store answers again (refusing paying clients because our database blinked is worse than
 *   honouring a revocation a little late); keys never seen get auth_unavailable.
 * - Made-up keys, many at once (a flood from someone with no key): each is a lookup, but only
 *   a few run at once, the others waiting their turn; a lookup that only waited, or failed
 *   while others were answered, does not count as the store being down; unknown keys are
 *   remembered apart from verified ones. So verified keys keep working and new ones are checked.
 */
export function createKeyVerifier(options: KeyVerifierOptions): KeyVerifier {
  const now = options.now ?? Date.now;
  const negativeTtlMs = options.negativeTtlMs ?? 3_000;
  const disconnectedTtlMs = Math.min(options.disconnectedTtlMs ?? 5_000, options.ttlMs);
  const ownsListener = !options.notifications;
  if (!options.notifications && !options.listenConnectionString) throw new Error('createKeyVerifier needs listenConnectionString or notifications');
  const notifications =
    options.notifications ?? createNotificationListener({ connectionString: options.listenConnectionString!, logger: options.logger });
  const lastUsed = createLastUsedRecorder({ db: options.db, intervalMs: options.lastUsedFlushMs, logger: options.logger });

  const cache = createStoreBackedCache<StoredKey | null>({
    now,
    lookupTimeoutMs: options.lookupTimeoutMs,
    maxEntries: options.maxCachedKeys ?? 100_000,
    isNegative: (key) => key === null,
    maxNegativeEntries: options.maxCachedUnknownKeys ?? 10_000,
    misses: { concurrency: options.concurrentUnknownKeyLookups ?? concurrentLookupsFor(options.db), maxWaiting: MAX_WAITING_UNKNOWN_KEY_LOOKUPS, waitMs: UNKNOWN_KEY_LOOKUP_WAIT_MS },
    trustMs: (key) => (key === null ? negativeTtlMs : notifications.connected ? options.ttlMs : disconnectedTtlMs),
    load: async (hash) => {
      // A dropped pooled connection would otherwise pause every key check for a second.
      const row = await retryOnDroppedConnection(async () => options.db('api_keys')
        .where({ hash })
        .first<{ id: string; organization_id: string; kind: KeyKind; mode: KeyMode; expires_at: Date | null; revoked_at: Date | null } | undefined>(
          'id', 'organization_id', 'kind', 'mode', 'expires_at', 'revoked_at',
        ));
      if (!row) return null;
      return {
        id: row.id,
        organizationId: row.organization_id,
        kind: row.kind,
        mode: row.mode,
        expiresAt: row.expires_at ? row.expires_at.getTime() : null,
        revokedAt: row.revoked_at ? row.revoked_at.getTime() : null,
      };
    },
  });

  // Token → hash of keys that verified, so a known key's request skips the SHA-256 (a few
  // microseconds, on every request). Only keys that verified go in, so guessed keys cannot
  // fill it; the hash of a key never changes, so nothing here needs evicting on revocation
  // (the cache entry behind the hash does). Bounded: cleared when full.
  const knownHashes = new Map<string, string>();
  const MAX_KNOWN_HASHES = 10_000;

  notifications.subscribe('api_key_changed', (hash) => cache.evict(hash));
  // One warning per outage window, not one per request (a guessing client would flood the log);
  // a flood's and an outage's apart, so that one does not hide the other.
  const warnedAt = { busy: Number.NEGATIVE_INFINITY, down: Number.NEGATIVE_INFINITY };
  const warnUnavailable = (err: StoreUnavailableError) => {
    const busy = err instanceof StoreBusyError;
    const kind = busy ? 'busy' : 'down';
    if (now() - warnedAt[kind] < 10_000) return;
    warnedAt[kind] = now();
    if (busy) options.logger.warn('too many lookups of keys not cached at once (guessed keys?): some get auth_unavailable, cached keys keep working', { err: err.cause });
    else options.logger.warn('key store unavailable: unknown keys get auth_unavailable, cached keys keep working', { err: err.cause ?? err });
  };
  notifications.onConnectionChange((connected) => {
    if (connected) cache.markAllStale();
  });

  return {
    async verify(authorization) {
      const token = bearerToken(authorization);
      if (!isApiKeyShaped(token)) throw notKeyShaped(token);
      let key: StoredKey | null;
      const hash = knownHashes.get(token) ?? hashApiKey(token);
      try {
        ({ value: key } = await cache.get(hash));
      } catch (err) {
        if (err instanceof StoreUnavailableError) {
          warnUnavailable(err);
          // Retry-After 1: the key cache asks the store again one second after a failure (and
          // one that waited too long for its turn may well get one a second later).
          throw new AppError('auth_unavailable', undefined, { cause: err, retryAfterSeconds: 1 });
        }
        throw err;
      }
      // Personal keys identify a person; the API and the key connection of the tool server
      // accept only organization keys (decisions.md). A refusal names its reason from the row
      // already read (and cached): nothing more is asked of the store, refused or accepted.
      if (!key) throw new AppError('invalid_api_key');
      const refusal = refusedKey(key, now());
      if (refusal) throw refusal;
      if (knownHashes.size >= MAX_KNOWN_HASHES) knownHashes.clear();
      knownHashes.set(token, hash);
      lastUsed.record(key.id);
      return { organizationId: key.organizationId, keyId: key.id, keyKind: key.kind, mode: key.mode };
    },
    ready: () => notifications.whenConnected(),
    async close() {
      await lastUsed.close();
      if (ownsListener) await notifications.close();
    },
  };
}
