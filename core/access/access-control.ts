// The access pipeline shared by the HTTP API and the MCP tool server, so both enforce the
// same keys, plans, flags and rate limits. Implemented in core/access; consumed at the edges.

export type ProductKind = 'endpoint' | 'tool';
export type UsageUnit = 'credits' | 'calls';

export interface Principal {
  organizationId: string;
  keyId: string;
  keyKind: 'organization' | 'personal';
  mode: 'live' | 'test';
}

/** What one successful call of a product costs this organization. */
export interface Measure {
  quantity: number;
  unit: UsageUnit;
}

export interface RateLimitStatus {
  limit: number;
  remaining: number;
  /** Whole seconds until the window resets. */
  resetSeconds: number;
}

export interface Grant {
  principal: Principal;
  product: string;
  measure: Measure;
  rateLimit: RateLimitStatus;
}

export interface AccessControl {
  /**
   * Resolves the bearer key to its organization. Throws AppError missing_api_key,
   * invalid_api_key (unknown, revoked, expired, personal) or auth_unavailable.
   */
  authenticate(authorization: string | undefined): Promise<Principal>;
  /**
   * Admits one call of `product` or throws AppError: rate_limited, client_not_configured,
   * not_entitled, credits_exhausted, limit_reached, entitlement_unavailable. Errors raised
   * after authentication carry the RateLimit-* headers in AppError.headers.
   *
   * `eventId`: the usage event the call will publish if served. Its charge is then held from
   * this moment (for an organization within reach of its balance or cap), so calls this process
   * admits at the same time (an MCP batch, parallel requests) are judged against each other's
   * charges, not each against the same balance. A call not served after all must be released.
   */
  authorize(principal: Principal, product: string, kind: ProductKind, eventId?: string): Promise<Grant>;
  /**
   * Counts an authenticated request that is not a product call (the per-key OpenAPI document,
   * MCP initialize and tools/list) against the organization's rate limit, so every
   * authenticated response carries true RateLimit-* headers and none can be hammered for free.
   * Throws AppError rate_limited (with the headers) or entitlement_unavailable; with
   * `requireConfigured`, also client_not_configured for an organization with no plan.
   */
  admit(principal: Principal, options?: { requireConfigured?: boolean }): Promise<RateLimitStatus>;
  /**
   * Notes a granted call whose usage event is now published (it will be charged). Until the
   * billing worker has applied it, authorize counts it against the organization's balance and
   * calls cap in this process, so calls made one after another cannot spend what the worker
   * has not deducted yet.
   */
  charged(grant: Grant, eventId: string): void;
  /** Drops the charge held for a granted call that was not served (not found, failed, refused later). */
  release(grant: Grant): void;
  /** The organization's products of one kind with their measures (per-key OpenAPI, tools/list). */
  entitlements(principal: Principal, kind: ProductKind): Promise<Map<string, Measure>>;
  /** Where rate limits are counted now (RateLimiter.store), for /healthz. */
  rateLimitStore(): string;
  close(): Promise<void>;
}
