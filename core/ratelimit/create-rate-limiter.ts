import type { Logger } from '../logging/index.js';
import { createInMemoryRateLimiter } from './in-memory-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { createRedisRateLimiter } from './redis-rate-limiter.js';

/** REDIS_URL set: shared through Redis; otherwise in process. */
export function createRateLimiter(options: { redisUrl?: string; redisKeyPrefix: string; logger: Logger }): RateLimiter {
  return options.redisUrl ? createRedisRateLimiter({ url: options.redisUrl, keyPrefix: options.redisKeyPrefix, logger: options.logger }) : createInMemoryRateLimiter();
}
