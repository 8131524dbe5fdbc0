import { describe, expect, it } from 'vitest';
import { parseConfig } from './parse-config.js';
import { chooseRateLimitStore, describeRateLimitStore } from './rate-limit-store.js';

const store = (env: Record<string, string>) => chooseRateLimitStore(parseConfig(env));

describe('choosing where rate limits are counted', () => {
  it('when REDIS_URL is set then Redis, else in process outside production', () => {
    expect(store({ REDIS_URL: 'redis://r:6379' })).toBe('redis');
    expect(store({ REDIS_URL: 'redis://r:6379', NODE_ENV: 'production' })).toBe('redis');
    expect(store({})).toBe('memory');
  });

  it('when NODE_ENV is production without REDIS_URL then in process only if RATE_LIMIT_STORE=memory asks for it', () => {
    expect(() => store({ NODE_ENV: 'production' })).toThrow(/REDIS_URL: required when NODE_ENV is production.*RATE_LIMIT_STORE=memory/);
    expect(store({ NODE_ENV: 'production', RATE_LIMIT_STORE: 'memory' })).toBe('memory');
  });

  it('when RATE_LIMIT_STORE and REDIS_URL disagree then neither is guessed', () => {
    expect(() => store({ RATE_LIMIT_STORE: 'redis' })).toThrow('RATE_LIMIT_STORE: redis, but REDIS_URL is not set');
    expect(() => store({ RATE_LIMIT_STORE: 'memory', REDIS_URL: 'redis://r:6379' })).toThrow('RATE_LIMIT_STORE: memory, but REDIS_URL is set too');
  });

  it('when said at start then the Redis address has no credentials', () => {
    expect(describeRateLimitStore(parseConfig({ REDIS_URL: 'rediss://app:s3cret@cache.internal:6380/2', REDIS_KEY_PREFIX: 'prod:' }))).toBe('rate limits: shared through Redis at cache.internal:6380 (prefix prod:)');
    expect(describeRateLimitStore(parseConfig({ REDIS_URL: 'redis://cache' }))).toBe('rate limits: shared through Redis at cache:6379 (prefix ratelimit:)');
    expect(describeRateLimitStore(parseConfig({}))).toBe('rate limits: in this process only');
  });
});
