import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { startTcpProxy } from '../../test/support/tcp-proxy.js';
import { createLogger } from '../logging/index.js';
import { createRedisRateLimiter, type RedisRateLimiter } from './redis-rate-limiter.js';

const REDIS_URL = 'redis://127.0.0.1:6379';
const opened: RedisRateLimiter[] = [];
afterEach(async () => {
  for (const l of opened.splice(0)) await l.close();
});

function limiter(url = REDIS_URL, keyPrefix = `test:ratelimit:${randomUUID()}:`, warnings: string[] = []) {
  const logger = createLogger({ level: 'info', write: (line) => warnings.push(line) });
  const l = createRedisRateLimiter({ url, logger, keyPrefix });
  opened.push(l);
  return l;
}

describe('Redis rate limiter', () => {
  it('when two instances limit one organization then they share one burst', async () => {
    const prefix = `test:ratelimit:${randomUUID()}:`;
    const a = limiter(REDIS_URL, prefix);
    const b = limiter(REDIS_URL, prefix);
    await Promise.all([a.ready(), b.ready()]);
    const limits = { perSecond: 1, burst: 10, perMinute: 1000 };
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).consume('org_shared', limits)));
    expect(results.filter((r) => r.allowed)).toHaveLength(10);
    const refused = results.find((r) => !r.allowed)!;
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.remaining).toBe(0);
    expect(refused.limit).toBe(10);
  });

  it('when two instances count one organization then they share one minute window', async () => {
    const prefix = `test:ratelimit:${randomUUID()}:`;
    const a = limiter(REDIS_URL, prefix);
    const b = limiter(REDIS_URL, prefix);
    await Promise.all([a.ready(), b.ready()]);
    const limits = { perSecond: 1000, burst: 1000, perMinute: 5 };
    // Keep the five calls inside one clock minute (Redis and we share the host clock).
    if (Date.now() % 60_000 > 59_000) await new Promise((r) => setTimeout(r, 1_100));
    for (let i = 0; i < 3; i++) expect((await a.consume('org_m', limits)).allowed).toBe(true);
    for (let i = 0; i < 2; i++) expect((await b.consume('org_m', limits)).allowed).toBe(true);
    const refused = await b.consume('org_m', limits);
    expect(refused.allowed).toBe(false);
    expect(refused.limit).toBe(5);
    expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60);
    expect((await a.consume('org_other', limits)).allowed).toBe(true);
  });

  it('when Redis is unreachable then calls are limited in process and a warning is logged (fail open)', async () => {
    const warnings: string[] = [];
    const l = limiter('redis://127.0.0.1:1', undefined, warnings);
    const limits = { perSecond: 1, burst: 2, perMinute: 100 };
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await l.consume('org_down', limits));
    expect(results.map((r) => r.allowed)).toEqual([true, true, false]);
    expect(warnings.some((w) => w.includes('fail open'))).toBe(true);
  });

  it('when Redis cannot be reached at start then that is said at once, before any call, and when it answers again that is said too', async () => {
    // A door to the real Redis that the test opens and closes.
    const door = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
    door.cut();
    const port = door.port;
    try {
      const lines: string[] = [];
      const l = limiter(`redis://127.0.0.1:${port}`, undefined, lines);
      const said = async (text: string) => {
        for (let i = 0; i < 100 && !lines.some((line) => line.includes(text)); i++) await new Promise((resolve) => setTimeout(resolve, 50));
        return lines.filter((line) => line.includes(text)).map((line) => JSON.parse(line) as { level: string; redis: unknown });
      };
      const down = await said('Redis rate limiter unavailable');
      expect(down).toEqual([expect.objectContaining({ level: 'warn', redis: { host: '127.0.0.1', port } })]);
      door.restore();
      await l.ready();
      expect(await said('reachable again')).toEqual([expect.objectContaining({ level: 'info', redis: { host: '127.0.0.1', port } })]);
      // Shared again: the call goes to Redis.
      expect((await l.consume('org_back', { perSecond: 1, burst: 1, perMinute: 10 })).allowed).toBe(true);
    } finally {
      await door.close();
    }
  });
});

