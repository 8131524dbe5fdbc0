import type { RateLimitStatus } from '../access/access-control.js';

/** The RateLimit-* headers sent on every authenticated response (decisions.md). */
export function rateLimitHeaders(status: RateLimitStatus): Record<string, string> {
  return {
    'RateLimit-Limit': String(status.limit),
    'RateLimit-Remaining': String(status.remaining),
    'RateLimit-Reset': String(status.resetSeconds),
  };
}
