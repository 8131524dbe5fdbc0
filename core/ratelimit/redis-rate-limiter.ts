import { Redis } from 'ioredis';
import type { Logger } from '../logging/index.js';
import { createInMemoryRateLimiter } from './in-memory-rate-limiter.js';
import { toDecision } from './rate-limit-state.js';
import type { RateLimiter } from './rate-limiter.js';

// applyCall (rate-limit-state.ts) in Lua: both limits checked and counted in one atomic step,
// on one hash per organization, using the Redis clock so instances with skewed clocks agree.
const SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local perMinute = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'win', 'cnt')
local tokens = tonumber(s[1])
local ts = tonumber(s[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local win = math.floor(now / 60000)
local cnt = 0
if tonumber(s[3]) == win then cnt = tonumber(s[4]) or 0 end
local allowed = 0
if tokens >= 1 and cnt < perMinute then
  tokens = tokens - 1
  cnt = cnt + 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', now, 'win', win, 'cnt', cnt)
redis.call('PEXPIRE', KEYS[1], 120000)
return { allowed, tostring(tokens), cnt, now }
`;

type ScriptReply = [number, string, number, number];
type RedisWithScript = Redis & { consumeRateLimit(key: string, rate: number, burst: number, perMinute: number): Promise<ScriptReply> };

export interface RedisRateLimiterOptions {
  /** REDIS_URL; the limiter owns the connection it opens. */
  url: string;
  logger: Logger;
  /** REDIS_KEY_PREFIX: namespace of our keys, one per deployment sharing the Redis (tests use a unique one each). */
  keyPrefix: string;
  /** A command slower than this counts as Redis being down. */
  commandTimeoutMs?: number;
}

/**
 * Limits shared by every instance through Redis. When Redis is unreachable we fail OPEN onto
 * an in-process limiter, with a warning: rate limits protect capacity, not money (credits and
 * call caps are enforced by the billing flags, which do not depend on Redis), so losing a
 * cache must not become an outage of the paid API. Each instance still enforces the limit on
 * its own, so the worst case is N instances x the limit until Redis is back.
 */
export interface RedisRateLimiter extends RateLimiter {
  /** Resolves when connected (until then calls are limited in process). */
  ready(): Promise<void>;
}

export function createRedisRateLimiter(options: RedisRateLimiterOptions): RedisRateLimiter {
  const redis = new Redis(options.url, {
    // Fail fast instead of queueing requests behind a reconnect.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 250,
    retryStrategy: (attempt) => Math.min(100 * 2 ** attempt, 5_000),
  }) as RedisWithScript;
  redis.defineCommand('consumeRateLimit', { numberOfKeys: 1, lua: SCRIPT });
  const fallback = createInMemoryRateLimiter();
  let warnedAt = 0;
  // Between a failure and the next connection. Said when it begins, whether or not a call comes
  // (a wrong REDIS_URL is seen at start, not at the first call), and when it ends.
  let outage = false;
  // Since when calls are limited in process: from the start until the first connection, then
  // from each failure until the next. Null while Redis counts them.
  let failOpenSince: Date | null = new Date();
  const where = { host: redis.options.host, port: redis.options.port };

  const warn = (err: unknown) => {
    outage = true;
    failOpenSince ??= new Date();
    const at = Date.now();
    if (at - warnedAt < 10_000) return;
    warnedAt = at;
    options.logger.warn('Redis rate limiter unavailable: limiting in process only (fail open)', { err, status: redis.status, redis: where });
  };
  // Once per outage here, then at most every 10 s from the calls below; not once per reconnect attempt.
  redis.on('error', (err: unknown) => {
    if (!outage) warn(err);
  });
  redis.on('ready', () => {
    failOpenSince = null;
    if (!outage) return;
    outage = false;
    options.logger.info('Redis rate limiter reachable again: limits are shared across processes', { redis: where });
  });

  return {
    store: () => (failOpenSince ? `redis (fail-open: Redis unreachable since ${failOpenSince.toISOString()})` : 'redis'),
    ready: () => (redis.status === 'ready' ? Promise.resolve() : new Promise((resolve) => redis.once('ready', () => resolve()))),
    async consume(key, limits) {
      if (redis.status !== 'ready') {
        warn(new Error(`redis ${redis.status}`));
        return fallback.consume(key, limits);
      }
      try {
        const [allowed, tokens, count, now] = await redis.consumeRateLimit(options.keyPrefix + key, limits.perSecond, limits.burst, limits.perMinute);
        failOpenSince = null;
        return toDecision(allowed === 1, Number(tokens), count, limits, now);
      } catch (err) {
        warn(err);
        return fallback.consume(key, limits);
      }
    },
    async close() {
      await fallback.close();
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
