import { describeRateLimitStore, type Config } from '../config/index.js';
import type { OpenDatabase } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { createRateLimiter } from '../ratelimit/index.js';
import { createAccessControl, type AccessControlHandle } from './create-access-control.js';

export interface ConfiguredAccessControl {
  access: AccessControlHandle;
  /** Closes the access control and its rate limiter. */
  close(): Promise<void>;
}

/**
 * The access pipeline as every process wires it from config: rate limits in Redis when
 * REDIS_URL is set (shared across instances, under REDIS_KEY_PREFIX), else in process.
 */
export function createConfiguredAccessControl({ config, database, logger }: { config: Config; database: OpenDatabase; logger: Logger }): ConfiguredAccessControl {
  logger.info(describeRateLimitStore(config));
  const rateLimiter = createRateLimiter({ redisUrl: config.REDIS_URL, redisKeyPrefix: config.REDIS_KEY_PREFIX, logger });
  const access = createAccessControl({
    db: database.db,
    listenConnectionString: database.connectionString,
    keyCacheTtlMs: config.KEY_CACHE_TTL_MS,
    entitlementCacheTtlMs: config.ENTITLEMENT_CACHE_TTL_MS,
    rateLimiter,
    logger,
  });
  return {
    access,
    close: async () => {
      await access.close();
      await rateLimiter.close();
    },
  };
}
