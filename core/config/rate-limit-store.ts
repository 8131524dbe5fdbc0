import { ConfigError } from './parse-config.js';
import type { Config } from './config-schema.js';

export type RateLimitStore = 'redis' | 'memory';

/**
 * Where an API or tool server counts rate limits: in Redis when REDIS_URL is set, shared by every
 * replica, else in its own memory. Counted in memory, N replicas allow N times each limit, and
 * nothing says so. So in production, where the compose file runs Redis, counting in process has
 * to be asked for by name (RATE_LIMIT_STORE=memory), and a forgotten or misspelt REDIS_URL stops
 * the process at start instead, as chooseUsageBus does for KAFKA_BROKERS.
 */
export function chooseRateLimitStore(config: Pick<Config, 'NODE_ENV' | 'REDIS_URL' | 'RATE_LIMIT_STORE'>): RateLimitStore {
  if (config.RATE_LIMIT_STORE === 'redis' && !config.REDIS_URL) {
    throw new ConfigError(['RATE_LIMIT_STORE: redis, but REDIS_URL is not set: set it to the Redis every API and tool server shares (redis://host:port)']);
  }
  if (config.RATE_LIMIT_STORE === 'memory' && config.REDIS_URL) {
    throw new ConfigError(['RATE_LIMIT_STORE: memory, but REDIS_URL is set too: unset one of them, so that it is clear where rate limits are counted']);
  }
  if (config.REDIS_URL) return 'redis';
  if (config.NODE_ENV === 'production' && config.RATE_LIMIT_STORE !== 'memory') {
    throw new ConfigError([
      'REDIS_URL: required when NODE_ENV is production, where every API and tool server counts rate limits in one Redis; or set RATE_LIMIT_STORE=memory to count them in each process instead (N processes then allow N times each limit)',
    ]);
  }
  return 'memory';
}

/** The start-up line saying where rate limits are counted: host, port and key prefix, never credentials. */
export function describeRateLimitStore(config: Pick<Config, 'REDIS_URL' | 'REDIS_KEY_PREFIX'>): string {
  if (!config.REDIS_URL) return 'rate limits: in this process only';
  const url = new URL(config.REDIS_URL);
  // A URL without a port means Redis's default one.
  return `rate limits: shared through Redis at ${url.hostname}:${url.port || '6379'} (prefix ${config.REDIS_KEY_PREFIX})`;
}
