import type { RateLimitDecision, RateLimits } from './rate-limiter.js';

// The arithmetic both limiters share. The in-process limiter runs `applyCall` in TypeScript;
// the Redis limiter runs the same steps in Lua (redis-rate-limiter.ts) so they stay atomic
// across instances. Keep the two in step.

export interface BucketState {
  /** Fractional tokens left in the per-second bucket. */
  tokens: number;
  /** Epoch ms of the last refill. */
  refilledAt: number;
  /** Index of the current fixed minute window (floor(ms / 60000)). */
  window: number;
  /** Calls admitted in that window. */
  count: number;
}

export const MINUTE_MS = 60_000;

export function applyCall(state: BucketState | undefined, limits: RateLimits, nowMs: number): { state: BucketState; allowed: boolean } {
  const elapsed = state ? Math.max(0, nowMs - state.refilledAt) : 0;
  let tokens = state ? Math.min(limits.burst, state.tokens + (elapsed * limits.perSecond) / 1000) : limits.burst;
  const window = Math.floor(nowMs / MINUTE_MS);
  let count = state && state.window === window ? state.count : 0;
  const allowed = tokens >= 1 && count < limits.perMinute;
  if (allowed) {
    tokens -= 1;
    count += 1;
  }
  return { state: { tokens, refilledAt: nowMs, window, count }, allowed };
}

/**
 * Headers report the policy closest to exhaustion (as the IETF RateLimit draft suggests):
 * usually the burst bucket, near the end of a busy minute the minute window. The minute
 * window is fixed (aligned to the clock minute): simple, exact to reset, and at worst lets
 * 2x the per-minute limit through across one boundary, which the per-second bucket bounds.
 */
export function toDecision(allowed: boolean, tokens: number, count: number, limits: RateLimits, nowMs: number): RateLimitDecision {
  const bucketRemaining = Math.max(0, Math.floor(tokens));
  const minuteRemaining = Math.max(0, limits.perMinute - count);
  const minuteReset = Math.max(1, Math.ceil(((Math.floor(nowMs / MINUTE_MS) + 1) * MINUTE_MS - nowMs) / 1000));
  const bucketReset = Math.max(1, Math.ceil((limits.burst - tokens) / limits.perSecond));
  const bucketBinds = bucketRemaining < minuteRemaining;
  const decision: RateLimitDecision = bucketBinds
    ? { allowed, limit: limits.burst, remaining: bucketRemaining, resetSeconds: bucketReset }
    : { allowed, limit: limits.perMinute, remaining: minuteRemaining, resetSeconds: minuteReset };
  if (!allowed) {
    const waits: number[] = [];
    if (tokens < 1) waits.push(Math.ceil((1 - tokens) / limits.perSecond));
    if (count >= limits.perMinute) waits.push(minuteReset);
    decision.retryAfterSeconds = Math.max(1, ...waits);
  }
  return decision;
}
