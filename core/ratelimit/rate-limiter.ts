import type { RateLimitStatus } from '../access/access-control.js';

/** One organization's limits: a token bucket (sustained rate + burst) and a per-minute cap. */
export interface RateLimits {
  perSecond: number;
  burst: number;
  perMinute: number;
}

export interface RateLimitDecision extends RateLimitStatus {
  allowed: boolean;
  /** Whole seconds, at least 1, when refused. */
  retryAfterSeconds?: number;
}

/**
 * Counts one call against `key` (an organization id) and says whether it may proceed. Both
 * checks are made together: a call refused by one limit consumes nothing from the other.
 */
export interface RateLimiter {
  consume(key: string, limits: RateLimits): Promise<RateLimitDecision>;
  /**
   * Where the limits are counted now, for /healthz: `redis`, `redis (fail-open: Redis unreachable
   * since <ISO time>)` while each process limits on its own (N replicas × the limit), or
   * `in-process` (no REDIS_URL). Absent: in process.
   */
  store?(): string;
  close(): Promise<void>;
}
