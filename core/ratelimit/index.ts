export type { RateLimiter, RateLimits, RateLimitDecision } from './rate-limiter.js';
export { createInMemoryRateLimiter } from './in-memory-rate-limiter.js';
export { createRedisRateLimiter, type RedisRateLimiter, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
export { createRateLimiter } from './create-rate-limiter.js';
export { rateLimitHeaders } from './rate-limit-headers.js';
