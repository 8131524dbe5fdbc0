import { createKeyVerifier } from '../auth/index.js';
import { nextPeriod, periodOf, periodStart, secondsUntilNextPeriod } from '../billing/billing-period.js';
import { createEntitlementResolver, type OrganizationAccess } from '../billing/plans/index.js';
import { createNotificationListener, type Db } from '../db/index.js';
import { AppError, errorCatalogue, isAppError, type ErrorCode } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { rateLimitHeaders, type RateLimitDecision, type RateLimiter } from '../ratelimit/index.js';
import type { AccessControl, Grant, Measure, Principal, RateLimitStatus } from './access-control.js';
import { couldRunOut, createPendingCharges } from './pending-charges.js';

export interface AccessControlOptions {
  db: Db;
  /** One LISTEN connection carries key, organization and plan notifications for the process. */
  listenConnectionString: string;
  /** KEY_CACHE_TTL_MS */
  keyCacheTtlMs: number;
  /** ENTITLEMENT_CACHE_TTL_MS */
  entitlementCacheTtlMs: number;
  /** Owned by the caller (closed by whoever created it). */
  rateLimiter: RateLimiter;
  logger: Logger;
  now?: () => number;
}

export interface AccessControlHandle extends AccessControl {
  /** Resolves once change notifications are being heard (readiness checks, tests). */
  ready(): Promise<void>;
}

/**
 * Order of checks in authorize, and why:
 * 1. Read the organization's state (cached): the rate limits live in its plan, so they must be
 *    known before anything can be counted.
 * 2. Count the call against the rate limit: every authenticated attempt counts, refused ones
 *    included, so a client cannot hammer us with calls we refuse, and every response after
 *    authentication can carry true RateLimit-* headers.
 * 3. Then configuration, entitlement and the allowance flags, cheapest first; none does I/O.
 */
export function createAccessControl(options: AccessControlOptions): AccessControlHandle {
  const notifications = createNotificationListener({ connectionString: options.listenConnectionString, logger: options.logger });
  const keys = createKeyVerifier({ db: options.db, logger: options.logger, ttlMs: options.keyCacheTtlMs, notifications, now: options.now });
  const pending = createPendingCharges();
  const entitlements = createEntitlementResolver({
    db: options.db,
    logger: options.logger,
    ttlMs: options.entitlementCacheTtlMs,
    notifications,
    now: options.now,
    unappliedEvents: (organizationId) => pending.eventIds(organizationId),
  });
  const nowMs = options.now ?? Date.now;
  const now = () => new Date(nowMs());
  // Each state read once: the events it found applied are forgotten from `pending`.
  const settled = new WeakSet<OrganizationAccess>();

  const refuse = (code: ErrorCode, rateLimit: RateLimitStatus, extra: { message?: string; retryAfterSeconds?: number } = {}): AppError =>
    new AppError(code, extra.message, { headers: rateLimitHeaders(rateLimit), retryAfterSeconds: extra.retryAfterSeconds });

  const readState = async (organizationId: string): Promise<OrganizationAccess> => {
    try {
      return await entitlements.get(organizationId);
    } catch (err) {
      if (!isAppError(err)) throw err;
      // Still count the attempt, against the last limits we knew, so the 503 has headers too.
      const known = entitlements.lastKnown(organizationId);
      if (known) {
        const decision = await options.rateLimiter.consume(organizationId, known.limits);
        const retryAfterSeconds = decision.allowed ? err.retryAfterSeconds : Math.max(err.retryAfterSeconds ?? 0, decision.retryAfterSeconds ?? 1);
        throw refuse(err.code, decision, { message: err.message, retryAfterSeconds });
      }
      throw err;
    }
  };

  // Steps 1 and 2 of authorize, and all of admit: the request counted, or refused past the limit.
  const count = async (principal: Principal): Promise<{ state: OrganizationAccess; rateLimit: RateLimitStatus }> => {
    const state = await readState(principal.organizationId);
    if (!settled.has(state)) {
      settled.add(state);
      pending.settle(principal.organizationId, state.appliedEventIds, nowMs());
    }
    const decision: RateLimitDecision = await options.rateLimiter.consume(principal.organizationId, state.limits);
    const rateLimit: RateLimitStatus = { limit: decision.limit, remaining: decision.remaining, resetSeconds: decision.resetSeconds };
    if (!decision.allowed) throw refuse('rate_limited', rateLimit, { retryAfterSeconds: decision.retryAfterSeconds ?? 1 });
    return { state, rateLimit };
  };

  return {
    authenticate: (authorization) => keys.verify(authorization),

    async authorize(principal, product, kind): Promise<Grant> {
      const { state, rateLimit } = await count(principal);
      if (!state.configured) throw refuse('client_not_configured', rateLimit);
      const entry = state.products.get(product);
      if (!entry || entry.kind !== kind) {
        throw refuse('not_entitled', rateLimit, kind === 'tool' ? { message: "This tool is not included in the organization's plan." } : {});
      }
      // Each flag refuses only the calls priced in its own unit (decisions.md). The flags say
      // that no call can be paid; a call dearer than what is left is refused too, from the
      // balance and count read with them, less this process's calls the worker has not
      // applied yet. A product priced at 0 credits costs nothing: an exhausted balance still
      // covers it.
      const { quantity, unit } = entry.measure;
      const unapplied = pending.totals(principal.organizationId);
      if (unit === 'credits' && quantity > 0) {
        if (state.creditsExhausted) throw refuse('credits_exhausted', rateLimit);
        if (state.creditsBalance !== null && state.creditsBalance - unapplied.credits < quantity) {
          throw refuse('credits_exhausted', rateLimit, { message: `The organization's credit balance cannot cover this call's ${quantity} credits. Top up credits to continue.` });
        }
      }
      if (unit === 'calls') {
        // When the cap resets, as a date: an agent reads "resets 2026-12-01T00:00:00Z" better
        // than a Retry-After of two million seconds.
        const resets = `It resets at the start of the next month, ${periodStart(nextPeriod(periodOf(now()))).toISOString().replace('.000Z', 'Z')}.`;
        if (state.limitReached) throw refuse('limit_reached', rateLimit, { message: `${errorCatalogue.limit_reached.message} ${resets}`, retryAfterSeconds: secondsUntilNextPeriod(now()) });
        const used = state.callsUsed + unapplied.calls;
        if (state.callsCap !== null && used + quantity > state.callsCap) {
          throw refuse('limit_reached', rateLimit, {
            message: `This call counts as ${quantity} calls, more than the ${Math.max(0, state.callsCap - used)} left under the organization's call cap for this billing period. ${resets}`,
            retryAfterSeconds: secondsUntilNextPeriod(now()),
          });
        }
      }
      return { principal, product, measure: { ...entry.measure }, rateLimit };
    },

    charged(grant, eventId) {
      const { organizationId } = grant.principal;
      const state = entitlements.lastKnown(organizationId);
      if (!state || grant.measure.quantity === 0) return;
      if (couldRunOut(state, pending.totals(organizationId), grant.measure, state.limits)) pending.add(organizationId, eventId, grant.measure, nowMs());
    },

    async admit(principal, admitOptions = {}): Promise<RateLimitStatus> {
      const { state, rateLimit } = await count(principal);
      if (admitOptions.requireConfigured && !state.configured) throw refuse('client_not_configured', rateLimit);
      return rateLimit;
    },

    async entitlements(principal: Principal, kind): Promise<Map<string, Measure>> {
      // An unprovisioned organization is entitled to nothing: an empty list, not an error, so
      // an MCP client can still connect and list (no) tools. The OpenAPI document refuses it
      // instead, through admit's requireConfigured: a document with no paths explains nothing.
      const state = await entitlements.get(principal.organizationId);
      const result = new Map<string, Measure>();
      for (const [slug, entry] of state.products) if (entry.kind === kind) result.set(slug, { ...entry.measure });
      return result;
    },

    ready: () => notifications.whenConnected(),

    async close() {
      await keys.close();
      await notifications.close();
    },
  };
}
