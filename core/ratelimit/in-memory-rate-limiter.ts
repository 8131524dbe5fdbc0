import { applyCall, MINUTE_MS, toDecision, type BucketState } from './rate-limit-state.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * The default: limits counted in this process. With several instances each enforces the full
 * limit on its own; set REDIS_URL to share them.
 */
export function createInMemoryRateLimiter(options: { now?: () => number } = {}): RateLimiter {
  const now = options.now ?? Date.now;
  const states = new Map<string, BucketState>();
  // Drop organizations idle for two minutes: their bucket is full and their window over, so
  // forgetting them changes nothing.
  const sweep = setInterval(() => {
    const cutoff = now() - 2 * MINUTE_MS;
    for (const [key, state] of states) if (state.refilledAt < cutoff) states.delete(key);
  }, MINUTE_MS);
  sweep.unref();

  return {
    store: () => 'in-process',
    async consume(key, limits) {
      const at = now();
      const { state, allowed } = applyCall(states.get(key), limits, at);
      states.set(key, state);
      return toDecision(allowed, state.tokens, state.count, limits, at);
    },
    async close() {
      clearInterval(sweep);
      states.clear();
    },
  };
}
