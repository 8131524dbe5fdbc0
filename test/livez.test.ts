import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../core/logging/index.js';
import { startComposedServices, type ComposedServices } from './support/composed-services.js';
import type { TcpProxy } from './support/tcp-proxy.js';

// /livez beside /healthz on the API, the tool server and the dashboard, composed as `npm start`
// composes them. /healthz is readiness and answers 503 while the database is away; a liveness
// probe pointed at it would restart every replica during the outage. /livez answers 200 while
// the process runs, whatever its dependencies, with no key, no rate limit, and no request-log
// line at info; a /healthz probe that succeeds is not logged at info either, one that fails is
// logged at warn, as every 5xx is.

let services: ComposedServices;
const lines: Record<string, unknown>[] = [];
let proxy: TcpProxy;
let urls: { api: string; mcp: string; dashboard: string };

beforeAll(async () => {
  services = await startComposedServices({ name: 'livez-test', poolMax: 4, logLevel: 'info', logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }) });
  ({ proxy, urls } = services);
});
afterAll(async () => {
  await services?.close();
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
