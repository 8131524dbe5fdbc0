import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { startComposedServices, type ComposedServices } from './support/composed-services.js';
import type { TcpProxy } from './support/tcp-proxy.js';

// /healthz of the API, the tool server and the dashboard over one process's pool, composed as
// `npm start` composes them (api/main.ts, mcp/main.ts and dashboard/main.ts each do the same
// alone), when the database stops answering without closing anything: frozen, or a partition.
// Compose healthchecks and load balancers keep probing every few seconds. Before, each probe's
// SELECT 1 kept its pooled connection after the probe had answered 503, until the pool was full
// of them and the calls the caches could still serve waited for a connection.

interface PoolCounts {
  numUsed(): number;
  numPendingCreates(): number;
  numPendingAcquires(): number;
}

const POOL_MAX = 4;
let services: ComposedServices;
let proxy: TcpProxy;
let database: OpenDatabase;
let urls: { api: string; mcp: string; dashboard: string };

beforeAll(async () => {
  services = await startComposedServices({ name: 'healthz-frozen-test', poolMax: POOL_MAX, logLevel: 'silent', logger: createLogger({ level: 'silent' }) });
  ({ proxy, urls, database } = services);
});
afterAll(async () => {
  await services?.close();
});

async function probe(url: string): Promise<{ status: number; body: unknown; ms: number }> {
  const began = Date.now();
  const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: await res.json(), ms: Date.now() - began };
}

describe('/healthz of every service of a process when the database stops answering without closing', () => {
  it('when twenty probes come to the three services, together and every 100 ms, then each answers 503 within its deadline and they hold at most one pooled connection between them, none waiting for one', async () => {
    for (const url of Object.values(urls)) expect((await probe(url)).status).toBe(200);
    const pool = (database.db.client as { pool: PoolCounts }).pool;
    proxy.freeze();

    let mostTaken = 0;
    let mostWaiting = 0;
    const sampler = setInterval(() => {
      mostTaken = Math.max(mostTaken, pool.numUsed() + pool.numPendingCreates());
      mostWaiting = Math.max(mostWaiting, pool.numPendingAcquires());
    }, 20);
    try {
      const targets = Object.values(urls);
      const answers: ReturnType<typeof probe>[] = [];
      for (let i = 0; i < 5; i++) answers.push(probe(targets[i % 3]!));
      for (let i = 5; i < 20; i++) {
        await new Promise((r) => setTimeout(r, 100));
        answers.push(probe(targets[i % 3]!));
      }
      for (const answer of await Promise.all(answers)) {
        expect(answer).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { database: 'unreachable' } } });
        expect(answer.ms).toBeLessThan(2_500);
      }
      // The pool's other connections stay free for the calls the caches can serve.
      expect({ mostTaken, mostWaiting }).toEqual({ mostTaken: 1, mostWaiting: 0 });
    } finally {
      clearInterval(sampler);
    }
  });
});
