import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { composeApi } from '../api/compose.js';
import { parseConfig } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { composeDashboard } from '../dashboard/compose.js';
import { composeMcp } from '../mcp/compose.js';
import { listen, type RunningServer } from './api-fixtures.js';
import { hostAndPort, startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';

// /livez beside /healthz on the API, the tool server and the dashboard, composed as `npm start`
// composes them. /healthz is readiness and answers 503 while the database is away; a liveness
// probe pointed at it would restart every replica during the outage. /livez answers 200 while
// the process runs, whatever its dependencies, with no key, no rate limit, and no request-log
// line at info; a /healthz probe that succeeds is not logged at info either, one that fails is
// logged at warn, as every 5xx is.

const cleanups: (() => Promise<unknown>)[] = [];
const lines: Record<string, unknown>[] = [];
let proxy: TcpProxy;
let urls: { api: string; mcp: string; dashboard: string };

beforeAll(async () => {
  const databaseUrl = inject('databaseUrl');
  proxy = await startTcpProxy(hostAndPort(databaseUrl));
  const config = parseConfig({ DATABASE_URL: proxy.urlFor(databaseUrl), DATABASE_POOL_MAX: '4', LOG_LEVEL: 'info' });
  const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const database = await openDatabase(config, logger, 'livez-test');
  cleanups.push(() => database.close());
  const api = await composeApi({ config, logger, database });
  cleanups.push(() => api.close());
  const mcp = composeMcp({ config, logger, database, access: api.access, companies: api.companies });
  cleanups.push(() => mcp.close());
  const dashboard = await composeDashboard({ config, logger, database, alertIntervalMs: 60_000 });
  cleanups.push(() => dashboard.close());
  await api.ready();
  const servers: RunningServer[] = [];
  for (const app of [api.app, mcp.app, dashboard.app]) servers.push(await listen(app));
  cleanups.push(...servers.map((server) => () => server.close()));
  urls = { api: servers[0]!.url, mcp: servers[1]!.url, dashboard: servers[2]!.url };
});
afterAll(async () => {
  await proxy?.close();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const requestLines = (path: string) => lines.filter((l) => l.msg === 'request' && l.path === path);

describe('/livez and /healthz of the API, the tool server and the dashboard', () => {
  it('when the database answers then both are 200, /livez without a key, no rate-limit headers, and neither probe is logged at info', async () => {
    for (const [service, url] of Object.entries(urls)) {
      const live = await fetch(`${url}/livez`);
      expect({ service, status: live.status, body: await live.json() }).toEqual({ service, status: 200, body: { status: 'ok' } });
      expect(live.headers.get('ratelimit-limit')).toBeNull();
      expect((await fetch(`${url}/healthz`)).status).toBe(200);
    }
    expect([...requestLines('/livez'), ...requestLines('/healthz')]).toEqual([]);
  });

  it('when the database stops answering then /healthz is 503, logged at warn, and /livez stays 200 at once', async () => {
    proxy.freeze();
    for (const [service, url] of Object.entries(urls)) {
      const began = Date.now();
      const live = await fetch(`${url}/livez`, { signal: AbortSignal.timeout(5_000) });
      expect({ service, status: live.status }).toEqual({ service, status: 200 });
      expect(Date.now() - began).toBeLessThan(500);
      const ready = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      expect({ service, status: ready.status }).toEqual({ service, status: 503 });
    }
    expect(requestLines('/livez')).toEqual([]);
    // The API and the tool server: the dashboard's request log is test/dashboard-request-log.test.ts's.
    expect(requestLines('/healthz').filter((l) => l.level === 'warn' && l.status === 503).length).toBeGreaterThanOrEqual(2);
    expect(requestLines('/healthz').filter((l) => l.level !== 'warn')).toEqual([]);
  });
});
