import http from 'node:http';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey } from '../core/auth/index.js';
import { errorCatalogue } from '../core/errors/index.js';
import {
  createTestOrganization, ensureExampleCompany, exampleCompanyCode, startTcpProxy, startTestApi, viaPort,
  type TestApi,
} from './api-fixtures.js';
import { connectClient, createToolOrganization, initializeRequest, startTestMcp, type TestMcp } from './mcp-fixtures.js';

// A flood of made-up keys from someone with no key of their own: each key is unknown, so each
// is looked up in Postgres. It must not stop real customers' keys from being checked, new ones
// included, on the API and the tool server alike (they share core/auth); a real outage of the
// key store must still answer as the contract says. Keys already verified surviving a flood
// larger than the cache of unknown keys: core/auth/key-verifier.test.ts.

let api: TestApi;
let mcp: TestMcp;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  api = await startTestApi();
  cleanups.push(() => api.close());
  mcp = await startTestMcp();
  cleanups.push(() => mcp.close());
  await ensureExampleCompany(api.db);
});
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const profile = `/companies/${exampleCompanyCode}/profile`;

async function call(base: string, key: string) {
  const res = await fetch(`${base}${profile}`, { headers: { Authorization: `Bearer ${key}` } });
  const text = await res.text();
  return { status: res.status, code: res.status === 200 ? undefined : (JSON.parse(text) as { error: { code: string } }).error.code, text };
}

/**
 * `flooders` clients, each sending a request with a fresh made-up key as soon as its previous
 * one is answered: a GET of `url`, or a POST of `body`. Counts the answers by status and code.
 */
function flood(url: string, flooders: number, body?: unknown) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: flooders });
  const answers: Record<string, number> = {};
  let stopped = false;
  const send = () =>
    new Promise<void>((resolve) => {
      const headers: http.OutgoingHttpHeaders = { authorization: `Bearer ${generateApiKey('live')}` };
      if (body) Object.assign(headers, { 'content-type': 'application/json', accept: 'application/json, text/event-stream' });
      const req = http.request(url, { method: body ? 'POST' : 'GET', agent, headers }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const code = (() => {
            try {
              return (JSON.parse(text) as { error?: { code?: string } }).error?.code;
            } catch {
              return undefined;
            }
          })();
          const answer = `${res.statusCode} ${code}`;
          answers[answer] = (answers[answer] ?? 0) + 1;
          resolve();
        });
      });
      req.on('error', () => resolve());
      req.end(body ? JSON.stringify(body) : undefined);
    });
  const loops = Array.from({ length: flooders }, async () => {
    while (!stopped) await send();
  });
  return {
    answers,
    answered: () => Object.values(answers).reduce((a, b) => a + b, 0),
    async stop() {
      stopped = true;
      await Promise.all(loops);
      agent.destroy();
    },
  };
}

// Enough to hold every pooled connection many times over: before, a lookup that waited behind
// the others past the 1 s deadline paused the key store for everyone not cached, and the plan
// reads of keys already verified waited behind the flood too.
const FLOODERS = 300;

describe('a flood of made-up keys from a client with no key', () => {
  it('when hundreds are sent at once, without pause, then keys never seen before are checked and served, and a verified key is served', async () => {
    const verified = await createTestOrganization(api.db);
    const fresh = await Promise.all(Array.from({ length: 8 }, () => createTestOrganization(api.db)));
    expect((await call(api.url, verified.key)).status).toBe(200);

    const flooding = flood(`${api.url}${profile}`, FLOODERS);
    try {
      // Well under way: every flooder has had answers.
      await expect.poll(() => flooding.answered(), { timeout: 30_000, interval: 50 }).toBeGreaterThan(2 * FLOODERS);
      // One after another, over a few seconds of flood.
      for (const organization of fresh) {
        const first = await call(api.url, organization.key);
        expect(first.status, first.text).toBe(200);
        const again = await call(api.url, verified.key);
        expect(again.status, again.text).toBe(200);
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await flooding.stop();
    }
    // The flood's keys were checked and refused as unknown, most of them if not all, rather
    // than waved off unchecked (503 auth_unavailable).
    expect(flooding.answers['401 invalid_api_key']).toBeGreaterThan(flooding.answered() / 2);
  });

  it('when hundreds are sent to the tool server then keys never seen before connect with the official client and list their tools', async () => {
    const fresh = await Promise.all(Array.from({ length: 8 }, () => createToolOrganization(mcp.db)));
    const flooding = flood(mcp.mcpUrl, FLOODERS, initializeRequest());
    try {
      await expect.poll(() => flooding.answered(), { timeout: 30_000, interval: 50 }).toBeGreaterThan(2 * FLOODERS);
      for (const organization of fresh) {
        const client = await connectClient(mcp.mcpUrl, organization.key);
        try {
          expect((await client.listTools()).tools.length).toBeGreaterThan(0);
        } finally {
          await client.close();
        }
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await flooding.stop();
    }
    expect(flooding.answers['401 invalid_api_key']).toBeGreaterThan(flooding.answered() / 2);
  });

  it('when the key store goes away during a flood then a verified key is still accepted and a key never seen, like the flood\'s, gets 503 auth_unavailable', async () => {
    const url = inject('databaseUrl');
    const proxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    cleanups.push(() => proxy.close());
    const other = await startTestApi({ databaseUrl: viaPort(url, proxy.port) });
    cleanups.push(() => other.close());
    await ensureExampleCompany(other.db);
    const cached = await createTestOrganization(api.db);
    const unseen = await createTestOrganization(api.db);
    expect((await call(other.url, cached.key)).status).toBe(200);

    const flooding = flood(`${other.url}${profile}`, 100);
    try {
      await expect.poll(() => flooding.answered(), { timeout: 30_000, interval: 50 }).toBeGreaterThan(200);
      await proxy.cut();
      // Lookups in progress end at their deadline; those waiting their turn find the store down.
      await expect.poll(() => call(other.url, generateApiKey('live')).then((r) => r.code), { timeout: 10_000 }).toBe('auth_unavailable');
      // The key is accepted; what refuses the call is its plan, which is never served stale
      // (api-errors.test.ts): not 401, not auth_unavailable.
      expect((await call(other.url, cached.key)).code).toBe('entitlement_unavailable');
      const refused = await call(other.url, unseen.key);
      expect([refused.status, refused.code]).toEqual([errorCatalogue.auth_unavailable.status, 'auth_unavailable']);
      const before = { ...flooding.answers };
      await expect.poll(() => flooding.answered(), { timeout: 10_000, interval: 50 }).toBeGreaterThan(Object.values(before).reduce((a, b) => a + b, 0) + 200);
      const since = Object.fromEntries(Object.entries(flooding.answers).map(([k, n]) => [k, n - (before[k] ?? 0)]).filter(([, n]) => n !== 0));
      expect(Object.keys(since)).toEqual(['503 auth_unavailable']);
    } finally {
      await flooding.stop();
    }
  });
});
