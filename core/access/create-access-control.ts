import { createKeyVerifier } from '../auth/index.js';
import { createEntitlementResolver, type OrganizationAccess } from '../billing/plans/index.js';
import { createNotificationListener, type Db } from '../db/index.js';
import { AppError, isAppError, type ErrorCode } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { rateLimitHeaders, type RateLimitDecision, type RateLimiter } from '../ratelimit/index.js';
import type { AccessControl, Grant, Measure, Principal, RateLimitStatus } from './access-control.js';
import { allowanceRefusal } from './allowance-refusal.js';
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

// How long an unapplied call counts at most (see createPendingCharges below).
const PENDING_MAX_AGE_MS = 3_600_000;

/**
 * Order of checks in authorize, and why:
 * 1. Read the organization's state (cached): the rate limits live in its plan, so they must be
 *    known before anything can be counted.
 * 2. Count the call against the rate limit: every authenticated attempt counts, refused ones
 *    included, so a client cannot hammer us with calls we refuse, and every response after
 *    authentication can carry true RateLimit-* headers.
 * 3. Then configuration, entitlement and the allowance flags, cheapest first; none does I/O,
 *    except when only this process's unapplied calls would refuse it (one fresh read then).
 */
export function createAccessControl(options: AccessControlOptions): AccessControlHandle {
  const nowMs = options.now ?? Date.now;
  const now = () => new Date(nowMs());
  const notifications = createNotificationListener({ connectionString: options.listenConnectionString, logger: options.logger });
  const keys = createKeyVerifier({ db: options.db, logger: options.logger, ttlMs: options.keyCacheTtlMs, notifications, now: options.now });
  // The pipeline's lag, taken generously: longer than the state cache keeps a reading, so a slow
  // reload cannot outlast it.
  const horizonSeconds = Math.max(10, (2 * options.entitlementCacheTtlMs) / 1000);
  // An unapplied call counts until the worker applies it, however long the worker is stopped:
  // forgotten after a minute, the balance last read would be served again every minute. The
  // hour is only a net for an event never applied (set aside as a dead letter); what is kept is
  // bounded by the allowance itself, as calls are refused once the pending ones use it up.
  const pending = createPendingCharges({ maxAgeMs: Math.max(PENDING_MAX_AGE_MS, 4 * options.entitlementCacheTtlMs) });
  const sweep = setInterval(() => pending.sweep(nowMs()), 30_000);
  sweep.unref();
  // Grants whose calls, once charged, count against the allowance here until applied.
  const tracked = new WeakSet<Grant>();
  // Tracked grants whose charge is held from authorize on (an event id was given), until the
  // call is charged (kept) or released (dropped).
  const held = new WeakMap<Grant, string>();
  const entitlements = createEntitlementResolver({
    db: options.db,
    logger: options.logger,
    ttlMs: options.entitlementCacheTtlMs,
    notifications,
    now: options.now,
    unappliedEvents: (organizationId) => pending.eventIds(organizationId),
  });
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
    rateLimitStore: () => options.rateLimiter.store?.() ?? 'in-process',

    async authorize(principal, product, kind, eventId): Promise<Grant> {
      const { state, rateLimit } = await count(principal);
      if (!state.configured) throw refuse('client_not_configured', rateLimit);
      const entry = state.products.get(product);
      if (!entry || entry.kind !== kind) {
        throw refuse('not_entitled', rateLimit, kind === 'tool' ? { message: "This tool is not included in the organization's plan. tools/list shows the tools this key may call; ask your account manager about a plan that includes this one." } : {});
      }
      const organizationId = principal.organizationId;
      let refusal = allowanceRefusal(state, pending.totals(organizationId), entry.measure, now());
      if (refusal?.becausePending) {
        // Refused only on account of this process's unapplied calls, which the worker may have
        // applied since the state was read (or while a reload was in flight, after it had
        // listed the events to look up): ask again before refusing a call that can be paid.
        const fresh = await entitlements.fresh(organizationId).catch(() => undefined);
        if (fresh) {
          pending.settle(organizationId, fresh.appliedEventIds, nowMs());
          refusal = allowanceRefusal(fresh, pending.totals(organizationId), entry.measure, now());
        }
      }
      if (refusal) throw refuse(refusal.code, rateLimit, refusal);
      const grant: Grant = { principal, product, measure: { ...entry.measure }, rateLimit };
      // Decided here, from the state just read: charged() must not depend on the cache still
      // holding it (a flag change evicts it, most often just when the balance runs low).
      if (entry.measure.quantity > 0 && couldRunOut(state, pending.totals(organizationId), entry.measure, state.limits, horizonSeconds)) {
        tracked.add(grant);
        // Held now, with no await since the refusal check above: the next call this process
        // admits sees it, however many are admitted at once.
        if (eventId !== undefined) {
          held.set(grant, eventId);
          pending.add(organizationId, eventId, entry.measure, nowMs());
        }
      }
      return grant;
    },

    charged(grant, eventId) {
      held.delete(grant);
      if (tracked.has(grant)) pending.add(grant.principal.organizationId, eventId, grant.measure, nowMs());
    },

    release(grant) {
      const eventId = held.get(grant);
      if (eventId === undefined) return;
      held.delete(grant);
      pending.remove(grant.principal.organizationId, eventId);
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
      clearInterval(sweep);
      await keys.close();
      await notifications.close();
    },
  };
}
