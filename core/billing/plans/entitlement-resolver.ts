import { createStoreBackedCache, StoreUnavailableError } from '../../cache/index.js';
import { describeDatabaseFailure, retryOnDroppedConnection, type Db, type NotificationListener } from '../../db/index.js';
import { AppError } from '../../errors/index.js';
import type { Logger } from '../../logging/index.js';
import type { RateLimits } from '../../ratelimit/index.js';
import { periodOf } from '../billing-period.js';
import { defaultRateLimits } from './default-plans.js';
import { effectiveProducts, OVERRIDES_JSON, PLAN_PRODUCTS_JSON, type EffectiveProduct, type PlanProduct, type ProductOverride } from './effective-products.js';
import { applyLimitOverrides } from './manage-organizations.js';

/** What the access pipeline needs to know about an organization, read in one query. */
export interface OrganizationAccess {
  organizationId: string;
  /** False: no plan (or no such organization, or suspended): client_not_configured. */
  configured: boolean;
  limits: RateLimits;
  products: Map<string, EffectiveProduct>;
  creditsExhausted: boolean;
  limitReached: boolean;
  /**
   * The balance as last read (null: no allowance row), and this month's calls used and cap (0
   * used when the row is still last month's). Stale by up to the cache's TTL: a top-up, grant,
   * adjustment or cap change evicts it at once (the allowance writer touches the flag columns,
   * whose trigger notifies), usage only lowers it, so a call it lets through is within the
   * overspend window of docs/billing.md.
   */
  creditsBalance: number | null;
  callsUsed: number;
  callsCap: number | null;
  /**
   * Of the events `unappliedEvents` named when this was read, those the ledger held: the
   * balance and calls used above include them (one statement reads both).
   */
  appliedEventIds: ReadonlySet<string>;
}

export interface EntitlementResolver {
  /** Throws AppError entitlement_unavailable when the state cannot be read. */
  get(organizationId: string): Promise<OrganizationAccess>;
  /** The last state read, however old: rate limits for the headers of a 503. */
  lastKnown(organizationId: string): OrganizationAccess | undefined;
  /**
   * The state read now, past the cache and any read in flight (whose list of unapplied events
   * may be older than the caller's), and not cached. Throws as the query does.
   */
  fresh(organizationId: string): Promise<OrganizationAccess>;
}

export interface EntitlementResolverOptions {
  db: Db;
  logger: Logger;
  /** ENTITLEMENT_CACHE_TTL_MS: the backstop behind notifications for flag and plan changes. */
  ttlMs: number;
  notifications: NotificationListener;
  lookupTimeoutMs?: number;
  now?: () => number;
  /** Usage events this process published for the organization that the balance may not include yet. */
  unappliedEvents?(organizationId: string): string[];
}

interface AccessRow {
  id: string;
  plan_id: string | null;
  status: string;
  rate_per_second: number | null;
  burst: number | null;
  rate_per_minute: number | null;
  plan_rate_per_second: number | null;
  plan_burst: number | null;
  plan_rate_per_minute: number | null;
  period: string | null;
  credits_exhausted: boolean | null;
  limit_reached: boolean | null;
  credits_balance: string | number | null;
  calls_used: string | number | null;
  calls_cap: string | number | null;
  /** The cap the next rollover gives (period-terms.ts): the organization's own, else its plan's. */
  next_calls_cap: string | number | null;
  plan_products: PlanProduct[];
  overrides: ProductOverride[];
  applied_event_ids: string[];
}

const ACCESS_QUERY = `
  SELECT o.id, o.plan_id, o.status, o.rate_per_second, o.burst, o.rate_per_minute,
         p.rate_per_second AS plan_rate_per_second, p.burst AS plan_burst, p.rate_per_minute AS plan_rate_per_minute,
         a.period, a.credits_exhausted, a.limit_reached, a.credits_balance, a.calls_used, a.calls_cap,
         CASE WHEN o.calls_cap_own THEN o.calls_cap_per_period ELSE p.calls_cap_per_period END AS next_calls_cap,
         ${PLAN_PRODUCTS_JSON} AS plan_products,
         ${OVERRIDES_JSON} AS overrides,
         ARRAY(SELECT l.event_id FROM usage_ledger l WHERE l.event_id = ANY(?::text[])) AS applied_event_ids
    FROM organizations o
    LEFT JOIN plans p ON p.id = o.plan_id
    LEFT JOIN allowances a ON a.organization_id = o.id
   WHERE o.id = ?`;

/**
 * Plans, overrides and flags per organization, cached for `ttlMs` and evicted at once by the
 * `organization_changed` (org, overrides, allowance flags) and `plan_changed` notifications.
 * Unlike keys, stale state is never served when Postgres is unreachable: a stale flag would
 * let an exhausted organization keep spending, so we answer entitlement_unavailable.
 */
export function createEntitlementResolver(options: EntitlementResolverOptions): EntitlementResolver {
  const now = options.now ?? Date.now;
  const load = async (organizationId: string): Promise<OrganizationAccess> => {
    const unapplied = options.unappliedEvents?.(organizationId) ?? [];
    // A dropped pooled connection would otherwise pause every organization's calls for a second.
    const { rows } = await retryOnDroppedConnection(async () => options.db.raw<{ rows: AccessRow[] }>(ACCESS_QUERY, [unapplied, organizationId]));
    return toAccess(organizationId, rows[0], now());
  };
  const cache = createStoreBackedCache<OrganizationAccess>({
    now,
    lookupTimeoutMs: options.lookupTimeoutMs,
    trustMs: () => options.ttlMs,
    load: (organizationId) => load(organizationId),
  });
  options.notifications.subscribe('organization_changed', (organizationId) => cache.evict(organizationId));
  // Plan changes are rare and touch many organizations: start afresh.
  options.notifications.subscribe('plan_changed', () => cache.markAllStale());
  options.notifications.onConnectionChange(() => cache.markAllStale());
  let warnedAt = Number.NEGATIVE_INFINITY;
  // Since when calls have been refused for it (said in a warn line), until a read succeeds again.
  let unavailableSince: number | undefined;
  const freshReads = new Map<string, Promise<OrganizationAccess>>();

  return {
    async get(organizationId) {
      let cause: unknown;
      try {
        const { value, stale } = await cache.get(organizationId);
        if (!stale) {
          if (unavailableSince !== undefined) {
            options.logger.info('plans and allowances readable again; paid calls are served', { unavailableForMs: now() - unavailableSince });
            unavailableSince = undefined;
          }
          return value;
        }
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        cause = err.cause ?? err;
      }
      unavailableSince ??= now();
      // Named for what an operator looks at: the database, and why (not a bare error object).
      if (now() - warnedAt >= 10_000) {
        warnedAt = now();
        options.logger.warn('cannot read plans and allowances from the database: paid calls get entitlement_unavailable until it answers', {
          organizationId,
          cause: cause === undefined ? 'the last read failed; the database is asked again each second' : describeDatabaseFailure(cause),
          err: cause,
        });
      }
      // Retry-After 1: the cache asks Postgres again one second after a failure.
      throw new AppError('entitlement_unavailable', undefined, { retryAfterSeconds: 1 });
    },
    lastKnown: (organizationId) => cache.peek(organizationId),
    fresh(organizationId) {
      // One read at a time per organization: while the worker is stopped, every call of one
      // whose unapplied calls use up its balance asks, and those in flight together share it.
      let flight = freshReads.get(organizationId);
      if (!flight) {
        // Through the cache, which keeps what it read (bounded as its loads are): the access
        // control forgets the unapplied calls this read shows applied, so the next call must be
        // judged on this state too. Judged on the older one the cache held, with those calls
        // forgotten, it was served past the cap or the balance (a cap of 10: 12 served).
        flight = cache.reload(organizationId).finally(() => {
          freshReads.delete(organizationId);
        });
        freshReads.set(organizationId, flight);
      }
      return flight;
    },
  };
}

function toAccess(organizationId: string, row: AccessRow | undefined, nowMs: number): OrganizationAccess {
  if (!row || row.plan_id === null || row.status !== 'active' || row.plan_rate_per_second === null) {
    return {
      organizationId,
      configured: false,
      limits: applyLimitOverrides(defaultRateLimits, { perSecond: row?.rate_per_second ?? null, burst: row?.burst ?? null, perMinute: row?.rate_per_minute ?? null }),
      products: new Map(),
      creditsExhausted: false,
      limitReached: false,
      creditsBalance: null,
      callsUsed: 0,
      callsCap: null,
      appliedEventIds: new Set(row?.applied_event_ids),
    };
  }
  // The call cap belongs to a period: a limit_reached left on last month's row (the billing
  // worker has not rolled it over yet) must not refuse this month's calls, nor last month's cap
  // (a cap of 0 set for that month only refused the new month's first calls with a Retry-After
  // of a month): such a row counts as the rollover will leave it, no calls used and the later
  // months' cap. A credit balance carries over, so credits_exhausted stands until the worker
  // grants the new period.
  const currentPeriod = row.period === periodOf(new Date(nowMs));
  const callsCap = currentPeriod ? row.calls_cap : row.next_calls_cap;
  return {
    organizationId,
    configured: true,
    limits: applyLimitOverrides(
      { perSecond: row.plan_rate_per_second, burst: row.plan_burst!, perMinute: row.plan_rate_per_minute! },
      { perSecond: row.rate_per_second, burst: row.burst, perMinute: row.rate_per_minute },
    ),
    products: effectiveProducts(row.plan_products, row.overrides),
    creditsExhausted: row.credits_exhausted === true,
    limitReached: currentPeriod && row.limit_reached === true,
    creditsBalance: row.credits_balance === null ? null : Number(row.credits_balance),
    callsUsed: currentPeriod ? Number(row.calls_used ?? 0) : 0,
    callsCap: callsCap === null ? null : Number(callsCap),
    appliedEventIds: new Set(row.applied_event_ids),
  };
}
