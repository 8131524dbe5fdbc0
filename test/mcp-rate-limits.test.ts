import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { upsertCompanies } from '../core/companies/write-companies.js';
import { createInMemoryRateLimiter } from '../core/ratelimit/index.js';
import { startTestApi, type TestApi } from './api-fixtures.js';
import { connectClient, createToolOrganization, initializeRequest, json, rpc, sampleGroup, startTestMcp, type TestMcp } from './mcp-fixtures.js';
import { killChildren } from './support/child-processes.js';
import { serviceEntries, startServiceProcess, type RunningService } from './support/service-processes.js';

// The API and the tool server count one organization's calls against one set of limits. Here
// they are two apps with their own access control sharing one rate-limit store, as two
// processes share Redis in production; the last describe runs them as such processes.

const rateLimiter = createInMemoryRateLimiter();
let api: TestApi;
let mcp: TestMcp;
let client: Client;

beforeAll(async () => {
  api = await startTestApi({ rateLimiter });
  mcp = await startTestMcp({ rateLimiter });
});
afterAll(async () => {
  await client?.close();
  await mcp?.close();
  await api?.close();
  await rateLimiter.close();
});

// The per-minute window is the clock minute: a test that counts against it starts well inside one.
async function clearOfMinuteBoundary(): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

const rateLimitOf = (res: Response) => ({
  limit: res.headers.get('ratelimit-limit'),
  remaining: res.headers.get('ratelimit-remaining'),
  reset: Number(res.headers.get('ratelimit-reset')),
});

describe('rate limits shared by API and tool server', () => {
  it('when an organization bursts across API and MCP then their calls together hit its one per-minute limit, on both sides', async () => {
    const group = sampleGroup();
    await upsertCompanies(mcp.db, [group.root]);
    // A per-minute cap of 13 and a generous bucket: connecting counts 3 (initialize, the
    // initialized notification, the client's GET), so exactly 10 calls pass within the minute.
    const org = await createToolOrganization(mcp.db, { endpoints: ['company-profile'], ratePerSecond: 100, burst: 100, ratePerMinute: 13 });
    await clearOfMinuteBoundary();
    client = await connectClient(mcp.mcpUrl, org.key);
    const apiCall = () => fetch(`${api.url}/companies/${group.root.fiscalCode}/profile`, { headers: { Authorization: `Bearer ${org.key}` } });
    const toolCall = async () => (await client.callTool({ name: 'service_get_company_profile', arguments: { taxId: group.root.fiscalCode } })) as CallToolResult;

    const outcomes: string[] = [];
    for (let i = 0; i < 7; i++) {
      outcomes.push(`api:${(await apiCall()).status}`);
      const result = await toolCall();
      outcomes.push(`mcp:${result.isError ? (result.structuredContent as any).error.code : 'ok'}`);
    }
    // The first 10 calls (5 API, 5 MCP, alternating) pass; after that both sides refuse.
    expect(outcomes.filter((o) => o === 'api:200' || o === 'mcp:ok')).toHaveLength(10);
    expect(outcomes.slice(0, 10).every((o) => o === 'api:200' || o === 'mcp:ok')).toBe(true);
    expect(outcomes.slice(10)).toEqual(['api:429', 'mcp:rate_limited', 'api:429', 'mcp:rate_limited']);

    const refused = await toolCall();
    expect(refused.isError).toBe(true);
    expect((refused.content[0] as { text: string }).text).toMatch(/Retry after \d+ seconds?\./);
    // The text reads the same whatever the client reads it from: it points at no header.
    expect((refused.content[0] as { text: string }).text).not.toMatch(/Retry-After/);
    expect((refused._meta as any).retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });

  it('when initialize, tools/list, a notification, the GET probe and a refused request are sent then each counts once and carries the RateLimit headers, and over the limit the answer is 429 with Retry-After', async () => {
    const org = await createToolOrganization(mcp.db, { endpoints: ['company-profile'], ratePerSecond: 100, burst: 100, ratePerMinute: 6 });
    const auth = { Authorization: `Bearer ${org.key}` };
    const versioned = { ...auth, 'Mcp-Protocol-Version': '2025-06-18' };
    await clearOfMinuteBoundary();
    const answers: [string, Response][] = [
      ['initialize', await rpc(mcp.mcpUrl, initializeRequest(), auth)],
      ['initialize as SSE', await rpc(mcp.mcpUrl, initializeRequest(), { ...auth, Accept: 'text/event-stream, application/json' })],
      ['notification', await rpc(mcp.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, versioned)],
      ['GET', await fetch(mcp.mcpUrl, { headers: { ...auth, Accept: 'text/event-stream' } })],
      ['bad Accept', await rpc(mcp.mcpUrl, initializeRequest(), { ...auth, Accept: 'application/json' })],
      ['tools/list', await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, versioned)],
    ];
    const seen = await Promise.all(answers.map(async ([what, res]) => {
      await res.text();
      const { limit, remaining, reset } = rateLimitOf(res);
      return { what, status: res.status, limit, remaining, resetOk: reset >= 1 && reset <= 60 };
    }));
    expect(seen).toEqual([
      { what: 'initialize', status: 200, limit: '6', remaining: '5', resetOk: true },
      { what: 'initialize as SSE', status: 200, limit: '6', remaining: '4', resetOk: true },
      { what: 'notification', status: 202, limit: '6', remaining: '3', resetOk: true },
      { what: 'GET', status: 405, limit: '6', remaining: '2', resetOk: true },
      { what: 'bad Accept', status: 406, limit: '6', remaining: '1', resetOk: true },
      { what: 'tools/list', status: 200, limit: '6', remaining: '0', resetOk: true },
    ]);

    // The seventh request is refused as the server refuses at the HTTP level: the error envelope.
    for (const refused of [
      await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, versioned),
      await rpc(mcp.mcpUrl, initializeRequest(), auth),
    ]) {
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(rateLimitOf(refused)).toMatchObject({ limit: '6', remaining: '0' });
      const body = await json(refused);
      expect(body).toEqual({ error: { code: 'rate_limited', message: expect.any(String), requestId: refused.headers.get('x-request-id') } });
    }
    // The same limit as the API's.
    expect((await fetch(`${api.url}/companies/00000000001/profile`, { headers: auth })).status).toBe(429);
  });

  it('when a request carries tools/call then it counts once per call, where the tool admits it, and not again for the request', async () => {
    const group = sampleGroup();
    await upsertCompanies(mcp.db, [group.root]);
    const org = await createToolOrganization(mcp.db, { ratePerSecond: 100, burst: 100, ratePerMinute: 100 });
    const headers = { Authorization: `Bearer ${org.key}`, 'Mcp-Protocol-Version': '2025-06-18' };
    const call = (id: number, name: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: { taxId: group.root.fiscalCode } } });
    await clearOfMinuteBoundary();
    const remaining: string[] = [];
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      call(2, 'service_get_company_profile'),
      [{ jsonrpc: '2.0', id: 3, method: 'tools/list' }, call(4, 'service_get_company_profile')],
      [call(5, 'service_get_company_profile'), call(6, 'service_get_company_profile')],
      // Tools refused before their admission (unknown, person-only) count as the request.
      call(7, 'service_no_such_tool'),
      call(8, 'service_get_usage'),
    ]) {
      const res = await rpc(mcp.mcpUrl, body, headers);
      expect(res.status).toBe(200);
      await res.text();
      remaining.push(res.headers.get('ratelimit-remaining') ?? 'none');
    }
    // The batch of two calls counts two (the next request sees 94); which of its calls set the
    // header last is not fixed, so its own value is not asserted.
    expect(remaining).toEqual(['99', '98', '97', expect.stringMatching(/^9[56]$/), '94', '93']);
  });

  it('when tool calls are answered as an event stream, alone or in a batch, then the answer carries the RateLimit headers counting them, and a refused call\'s wait in Retry-After, as a JSON answer does', async () => {
    const group = sampleGroup();
    await upsertCompanies(mcp.db, [group.root]);
    const org = await createToolOrganization(mcp.db, { ratePerSecond: 100, burst: 100, ratePerMinute: 6 });
    const sse = { Authorization: `Bearer ${org.key}`, 'Mcp-Protocol-Version': '2025-06-18', Accept: 'text/event-stream, application/json' };
    const call = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const events = async (res: Response) => (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    await clearOfMinuteBoundary();

    // The official client, asking for event streams: connecting counts 3, its call 1.
    const posted: { body: string; type: string | null; limit: string | null; remaining: string | null }[] = [];
    let probed!: () => void;
    const probe = new Promise<void>((resolve) => { probed = resolve; });
    const sseFetch: typeof fetch = async (input, init) => {
      if (init?.method === 'GET') return fetch(input, init).finally(probed);
      const headers = new Headers(init?.headers);
      if (init?.method === 'POST') headers.set('Accept', 'text/event-stream, application/json');
      const res = await fetch(input, { ...init, headers });
      if (init?.method === 'POST') posted.push({ body: String(init.body), type: res.headers.get('content-type'), limit: res.headers.get('ratelimit-limit'), remaining: res.headers.get('ratelimit-remaining') });
      return res;
    };
    const sseClient = new Client({ name: 'sse-client', version: '1.0.0' });
    await sseClient.connect(new StreamableHTTPClientTransport(new URL(mcp.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${org.key}` } }, fetch: sseFetch }));
    await probe;
    try {
      const result = (await sseClient.callTool({ name: 'service_get_company_profile', arguments: { taxId: group.root.fiscalCode } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      const toolCall = posted.find((p) => p.body.includes('"tools/call"'))!;
      expect(toolCall).toMatchObject({ type: expect.stringMatching(/^text\/event-stream/), limit: '6', remaining: '2' });
    } finally {
      await sseClient.close();
    }

    // A lone call, raw: the fifth request of the minute.
    const lone = await rpc(mcp.mcpUrl, call(1, 'service_analyze_company', { fiscalCode: group.root.fiscalCode }), sse);
    expect(lone.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(rateLimitOf(lone)).toMatchObject({ limit: '6', remaining: '1' });
    expect((await events(lone))[0].result.structuredContent.company.fiscalCode).toBe(group.root.fiscalCode);

    // A batch of two: one takes the minute's last request, the other is refused and says how long to wait.
    const batch = await rpc(mcp.mcpUrl, [call(2, 'service_search_companies', { query: group.token }), call(3, 'service_search_companies', { query: group.token })], sse);
    expect(rateLimitOf(batch)).toMatchObject({ limit: '6', remaining: '0' });
    const answers = await events(batch);
    const refused = answers.find((a) => a.result.isError);
    expect(refused.result.structuredContent.error.code).toBe('rate_limited');
    expect(batch.headers.get('retry-after')).toBe(String(refused.result._meta.retryAfterSeconds));
  });

  it('when tool calls are refused as limit_reached or rate_limited then the JSON answer, still 200, carries Retry-After with the wait, for a batch the longest', async () => {
    // Every tool priced in calls with the calls cap reached, and two requests a minute.
    const org = await createToolOrganization(mcp.db, { ratePerSecond: 100, burst: 100, ratePerMinute: 2 });
    await mcp.db('plan_entitlements').where({ plan_id: org.planId }).update({ unit: 'calls', quantity: 1 });
    await mcp.db('allowances').where({ organization_id: org.organizationId }).update({ limit_reached: true });
    const headers = { Authorization: `Bearer ${org.key}`, 'Mcp-Protocol-Version': '2025-06-18' };
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'service_search_companies', arguments: { query: 'rossi' } } });
    const refusal = (response: any) => ({ code: response.result.structuredContent.error.code as string, wait: response.result._meta.retryAfterSeconds as number });
    await clearOfMinuteBoundary();

    // A lone call (answered without the SDK's Server): limit_reached, waiting for the next period.
    const capped = await rpc(mcp.mcpUrl, call(1), headers);
    expect(capped.status).toBe(200);
    const cappedBody = await json(capped);
    expect(cappedBody.result.isError).toBe(true);
    expect(refusal(cappedBody).code).toBe('limit_reached');
    expect(capped.headers.get('retry-after')).toBe(String(refusal(cappedBody).wait));

    // A batch (through the Server): one call takes the minute's last request and is capped, the
    // other is rate limited; the header has the longer wait.
    const batch = await rpc(mcp.mcpUrl, [call(2), call(3)], headers);
    expect(batch.status).toBe(200);
    const refusals = ((await json(batch)) as any[]).map(refusal);
    expect(refusals.map((r) => r.code).sort()).toEqual(['limit_reached', 'rate_limited']);
    expect(Math.min(...refusals.map((r) => r.wait))).toBeGreaterThanOrEqual(1);
    expect(batch.headers.get('retry-after')).toBe(String(Math.max(...refusals.map((r) => r.wait))));

    // A lone rate_limited call.
    const limited = await rpc(mcp.mcpUrl, call(4), headers);
    const limitedBody = await json(limited);
    expect(refusal(limitedBody).code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe(String(refusal(limitedBody).wait));
    expect(rateLimitOf(limited)).toMatchObject({ limit: '2', remaining: '0' });

    // Error results of other kinds tell no wait: no header.
    const other = await createToolOrganization(mcp.db);
    const otherHeaders = { ...headers, Authorization: `Bearer ${other.key}` };
    const profile = (id: number, taxId: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'service_get_company_profile', arguments: { taxId } } });
    for (const body of [profile(5, '00000000001'), [profile(6, '00000000001'), profile(7, '')]]) {
      const res = await rpc(mcp.mcpUrl, body, otherHeaders);
      expect(JSON.stringify(await json(res))).toContain('"isError":true');
      expect(res.headers.get('retry-after')).toBeNull();
    }
  });
});

// Production's shape: the API and the tool server alone in processes of their own, sharing the
// limits through Redis under REDIS_KEY_PREFIX. Two deployments pointed at one Redis (staging and
// production) set different prefixes; before, both counted under `ratelimit:`, so one
// organization's calls in staging used up its limits in production.
describe('rate limits of API and tool-server processes on one Redis', () => {
  const redisUrl = 'redis://127.0.0.1:6379';
  // Namespaces of this run's own: other runs on the same Redis count elsewhere.
  const production = `test:ratelimit:${randomUUID()}:`;
  const staging = `test:staging:ratelimit:${randomUUID()}:`;
  const children: ChildProcess[] = [];
  let apiProcess: RunningService;
  let mcpProcess: RunningService;
  let stagingMcpProcess: RunningService;
  let redis: Redis;

  const apiCall = async (key: string) => {
    const res = await fetch(`${apiProcess.baseUrl}/companies/00000000001/profile`, { headers: { Authorization: `Bearer ${key}` } });
    await res.text();
    return `api:${res.status}:${res.headers.get('ratelimit-remaining')}`;
  };
  const toolsList = async (service: RunningService, key: string) => {
    const res = await rpc(`${service.baseUrl}/mcp`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { Authorization: `Bearer ${key}`, 'Mcp-Protocol-Version': '2025-06-18' });
    await res.text();
    return `mcp:${res.status}:${res.headers.get('ratelimit-remaining')}`;
  };

  /**
   * Until its Redis connection is up a process counts in itself (fail open): calls of an
   * organization of its own, until one is seen counted in Redis under `prefix`.
   */
  async function untilCountingInRedis(call: (key: string) => Promise<string>, prefix: string): Promise<void> {
    const probe = await createToolOrganization(mcp.db, { endpoints: ['company-profile'] });
    for (let i = 0; i < 100; i++) {
      await call(probe.key);
      if (await redis.exists(`${prefix}${probe.organizationId}`)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no call counted in Redis under ${prefix}`);
  }

  beforeAll(async () => {
    const env = (prefix: string) => ({ DATABASE_URL: inject('databaseUrl'), MIGRATE_ON_START: 'false', KAFKA_BROKERS: '', REDIS_URL: redisUrl, REDIS_KEY_PREFIX: prefix });
    redis = new Redis(redisUrl);
    [apiProcess, mcpProcess, stagingMcpProcess] = await Promise.all([
      startServiceProcess(serviceEntries.api, env(production), children),
      startServiceProcess(serviceEntries.mcp, env(production), children),
      startServiceProcess(serviceEntries.mcp, env(staging), children),
    ]);
    await Promise.all([
      untilCountingInRedis(apiCall, production),
      untilCountingInRedis((key) => toolsList(mcpProcess, key), production),
      untilCountingInRedis((key) => toolsList(stagingMcpProcess, key), staging),
    ]);
  }, 60_000);
  afterAll(async () => {
    await killChildren(children);
    redis?.disconnect();
  });

  it('when an API and a tool-server process have the same REDIS_KEY_PREFIX then their calls together hit the organization\'s one per-minute limit', async () => {
    const org = await createToolOrganization(mcp.db, { endpoints: ['company-profile'], ratePerSecond: 100, burst: 100, ratePerMinute: 4 });
    await clearOfMinuteBoundary();
    const outcomes = [];
    for (let i = 0; i < 3; i++) outcomes.push(await apiCall(org.key), await toolsList(mcpProcess, org.key));
    // An unknown company is a 404, counted like any call.
    expect(outcomes).toEqual(['api:404:3', 'mcp:200:2', 'api:404:1', 'mcp:200:0', 'api:429:0', 'mcp:429:0']);
    expect(await redis.exists(`${production}${org.organizationId}`)).toBe(1);
  });

  it('when two processes on one Redis have different REDIS_KEY_PREFIXes (two deployments) then each counts the organization\'s calls on its own', async () => {
    const org = await createToolOrganization(mcp.db, { endpoints: ['company-profile'], ratePerSecond: 100, burst: 100, ratePerMinute: 3 });
    await clearOfMinuteBoundary();
    const outcomes = [];
    for (let i = 0; i < 4; i++) outcomes.push(await apiCall(org.key));
    expect(outcomes).toEqual(['api:404:2', 'api:404:1', 'api:404:0', 'api:429:0']);
    // Production has used up the organization's minute; staging has its own.
    const staged = [];
    for (let i = 0; i < 4; i++) staged.push(await toolsList(stagingMcpProcess, org.key));
    expect(staged).toEqual(['mcp:200:2', 'mcp:200:1', 'mcp:200:0', 'mcp:429:0']);
    expect(await apiCall(org.key)).toBe('api:429:0');
    expect(await redis.exists(`${production}${org.organizationId}`, `${staging}${org.organizationId}`)).toBe(2);
  });
});
