import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { composeApi } from '../api/compose.js';
import { parseConfig } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { composeMcp } from '../mcp/compose.js';
import { listen, type RunningServer } from './api-fixtures.js';
import { startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

// The readiness answer of the API and the tool server says where rate limits are counted, so an
// SRE can alert on Redis failing open (each replica then limits on its own: N × the limit)
// without reading logs. It is a figure, not a check: the status stays 200.

const cleanups: (() => Promise<unknown>)[] = [];
let redisProxy: TcpProxy;
const urls: Record<string, string> = {};

beforeAll(async () => {
  redisProxy = await startTcpProxy({ host: '127.0.0.1', port: 6379 });
  const logger = createLogger({ level: 'silent' });
  const databaseUrl = inject('databaseUrl');
  for (const [name, redis] of [['redis', `redis://127.0.0.1:${redisProxy.port}`], ['in-process', undefined]] as const) {
    const config = parseConfig({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent', ...(redis ? { REDIS_URL: redis, REDIS_KEY_PREFIX: `test-${randomUUID()}:` } : {}) });
    const database = await openDatabase(config, logger, 'healthz-rate-limit-test');
    cleanups.push(() => database.close());
    const api = await composeApi({ config, logger, database });
    cleanups.push(() => api.close());
    const mcp = composeMcp({ config, logger, database });
    cleanups.push(() => mcp.close());
    for (const [service, app] of [['api', api.app], ['mcp', mcp.app]] as const) {
      const server: RunningServer = await listen(app);
      cleanups.push(() => server.close());
      urls[`${service} ${name}`] = server.url;
    }
  }
});
afterAll(async () => {
  await redisProxy?.close();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function healthz(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${url}/healthz`);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function until(url: string, test: (store: string) => boolean): Promise<{ status: number; body: Record<string, unknown> }> {
  let last = await healthz(url);
  for (let i = 0; i < 100 && !test(String(last.body.rateLimitStore)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await healthz(url);
  }
  return last;
}

describe('/healthz of the API and the tool server: the rate-limit store', () => {
  it('when REDIS_URL is unset then it is in-process', async () => {
    for (const service of ['api', 'mcp']) expect(await healthz(urls[`${service} in-process`]!)).toEqual({ status: 200, body: { status: 'ok', rateLimitStore: 'in-process' } });
  });

  it('when Redis answers then it is redis, and when Redis goes away then it says since when it fails open, still 200', async () => {
    for (const service of ['api', 'mcp']) expect(await until(urls[`${service} redis`]!, (store) => store === 'redis')).toEqual({ status: 200, body: { status: 'ok', rateLimitStore: 'redis' } });
    const cutAt = Date.now();
    await redisProxy.close();
    for (const service of ['api', 'mcp']) {
      const answer = await until(urls[`${service} redis`]!, (store) => store !== 'redis');
      expect(answer.status).toBe(200);
      const store = String(answer.body.rateLimitStore);
      const since = /^redis \(fail-open: Redis unreachable since (\S+)\)$/.exec(store)?.[1];
      expect({ service, store, since: since !== undefined }).toEqual({ service, store, since: true });
      expect(Date.parse(since!)).toBeGreaterThanOrEqual(cutAt - 1_000);
    }
  });
});
