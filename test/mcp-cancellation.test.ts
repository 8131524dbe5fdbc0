import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCompanyStore } from '../core/companies/index.js';
import { createDb, migrateLatest, type Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageSink } from '../core/usage/index.js';
import { insertCompanies, makeDossier } from './api-fixtures.js';
import { createToolOrganization, rpc, startTestMcp, type TestMcp } from './mcp-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { slowed } from './support/slowed-store.js';
import { eventsOnBus } from './support/usage-bus.js';

// A batch that carries a request and a `notifications/cancelled` naming it: the POST is answered
// at once without that request's answer (the MCP specification: the receiver of a cancellation
// should not respond to the request), and a cancelled tools/call is not charged. Before, the
// SDK's Server aborted the request and sent nothing for it, so the POST was never answered, and
// the tool call was billed all the same. Also: the safety deadline of a batch's answer.
// Usage events go to a bus database of this file's own, which no billing worker drains, so the
// events published are exactly those on it.

const silent = createLogger({ level: 'silent' });
const company = makeDossier();
const LOOKUP_MS = 600;
const DEADLINE_MS = 200;
const lines: Record<string, unknown>[] = [];
let scratch: ScratchDatabase;
let bus: Db;
let companies: Db;
let mcp: TestMcp;
let slowMcp: TestMcp;

beforeAll(async () => {
  scratch = await createScratchDatabase('mcp_cancel_bus');
  bus = createDb({ connectionString: scratch.url, poolMax: 3 });
  await migrateLatest(bus);
  companies = createDb({ connectionString: inject('databaseUrl'), poolMax: 2 });
  await insertCompanies(companies, [company]);
  const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  mcp = await startTestMcp({ usage: createPostgresUsageSink(bus, { logger: silent }), logger });
  slowMcp = await startTestMcp({
    usage: createPostgresUsageSink(bus, { logger: silent }),
    store: slowed(createCompanyStore({ db: companies, queryTimeoutMs: 5_000, logger: silent }), LOOKUP_MS),
    answerDeadlineMs: DEADLINE_MS,
    logger,
  });
});
afterAll(async () => {
  await slowMcp?.close();
  await mcp?.close();
  await companies?.destroy();
  await bus?.destroy();
  await scratch?.drop();
});

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const request = (id: number, method: string, params?: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method, ...(params && { params }) });
const toolCall = (id: number, name: string, args: Record<string, unknown>) => request(id, 'tools/call', { name, arguments: args });
const cancel = (requestId: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'the user changed their mind' } });
const profileCall = (id: number) => toolCall(id, 'service_get_company_profile', { taxId: company.fiscalCode });
/** What the tool server answered, within 5 s (the bug: never). */
const post = (url: string, body: unknown, key: string) => rpc(url, body, { ...auth(key), 'Mcp-Protocol-Version': '2025-06-18' }).then(async (res) => ({ res, text: await res.text() }));
const accessLine = (requestId: string | null) => lines.filter((l) => l.msg === 'request' && l.requestId === requestId);

describe('when a batch cancels one of its own requests', () => {
  it('then the POST is answered with the other answers only, the cancelled tool call is not charged, and the request line is written', { timeout: 10_000 }, async () => {
    const org = await createToolOrganization(mcp.db);
    const { res, text } = await post(mcp.mcpUrl, [profileCall(1), cancel(1), profileCall(2)], org.key);
    expect(res.status).toBe(200);
    const answers = JSON.parse(text) as { id: number; result: { isError?: boolean; _meta: { requestId: string } } }[];
    expect(answers.map((a) => a.id)).toEqual([2]);
    expect(answers[0]!.result.isError).toBeUndefined();
    // Only the call that was answered is charged.
    const events = await eventsOnBus(bus, { organizationId: org.organizationId });
    expect(events.map((e) => e.eventId)).toEqual([answers[0]!.result._meta.requestId]);
    expect(accessLine(res.headers.get('x-request-id'))).toEqual([expect.objectContaining({
      status: 200, organizationId: org.organizationId,
      rpc: ['tools/call service_get_company_profile', 'notifications/cancelled', 'tools/call service_get_company_profile'],
    })]);
    expect(res.headers.get('ratelimit-remaining')).not.toBeNull();
  });

  it('then a batch whose every request is cancelled is answered 202 with no body, nothing charged, wherever the cancellation stands', { timeout: 10_000 }, async () => {
    const org = await createToolOrganization(mcp.db);
    // The reviewer's case: a search, then its cancellation.
    for (const batch of [
      [toolCall(1, 'service_search_companies', { query: 'gallo', limit: 1 }), cancel(1)],
      [cancel(1), profileCall(1)],
      [request(1, 'ping'), cancel(1)],
      [request(1, 'tools/list'), cancel(1)],
    ]) {
      const { res, text } = await post(mcp.mcpUrl, batch, org.key);
      expect([res.status, text]).toEqual([202, '']);
      expect(accessLine(res.headers.get('x-request-id'))).toEqual([expect.objectContaining({ status: 202, organizationId: org.organizationId })]);
    }
    expect(await eventsOnBus(bus, { organizationId: org.organizationId })).toEqual([]);
  });

  it('then a ping or tools/list beside a cancelled one is answered as usual', { timeout: 10_000 }, async () => {
    const org = await createToolOrganization(mcp.db);
    const { res, text } = await post(mcp.mcpUrl, [request(1, 'ping'), cancel(1), request(2, 'tools/list'), request(3, 'ping')], org.key);
    expect(res.status).toBe(200);
    const answers = JSON.parse(text) as { id: number; result: Record<string, unknown> }[];
    expect(answers.map((a) => a.id)).toEqual([2, 3]);
    expect((answers[0]!.result.tools as unknown[]).length).toBeGreaterThan(0);
    expect(answers[1]!.result).toEqual({});
  });
});

describe('when a cancellation comes in a POST of its own', () => {
  it('then it is accepted (202): it cannot reach a request of another POST, which has been answered, and charged, on its own', async () => {
    const org = await createToolOrganization(mcp.db);
    const called = await post(mcp.mcpUrl, profileCall(1), org.key);
    expect(called.res.status).toBe(200);
    const { res, text } = await post(mcp.mcpUrl, cancel(1), org.key);
    expect([res.status, text]).toEqual([202, '']);
    const answer = JSON.parse(called.text) as { result: { _meta: { requestId: string } } };
    expect((await eventsOnBus(bus, { organizationId: org.organizationId })).map((e) => e.eventId)).toEqual([answer.result._meta.requestId]);
  });
});

describe('when a batch\'s request takes longer than the answer\'s deadline', () => {
  it('then the POST is answered at the deadline with an internal error for it, and the call, given up, is not charged when it ends', { timeout: 10_000 }, async () => {
    const org = await createToolOrganization(slowMcp.db);
    const started = Date.now();
    const { res, text } = await post(slowMcp.mcpUrl, [profileCall(1), request(2, 'ping')], org.key);
    expect(Date.now() - started).toBeLessThan(LOOKUP_MS);
    expect(res.status).toBe(200);
    const answers = JSON.parse(text) as { id: number; result?: unknown; error?: { code: number; message: string; data: { code: string; requestId: string } } }[];
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[0]!.error).toMatchObject({ code: -32603, message: expect.stringMatching(/^An internal error occurred/), data: { code: 'internal_error' } });
    expect(answers[1]!.result).toEqual({});
    expect(accessLine(res.headers.get('x-request-id'))).toEqual([expect.objectContaining({ status: 200, errorCode: 'internal_error' })]);
    // The lookup ends after the answer went: the call sees it was given up and publishes nothing.
    await new Promise((resolve) => setTimeout(resolve, LOOKUP_MS * 2));
    expect(await eventsOnBus(bus, { organizationId: org.organizationId })).toEqual([]);
    expect(lines.some((l) => l.msg === 'the call was cancelled, or its batch answered without it, before its result was ready: not sent, not charged' && l.organizationId === org.organizationId)).toBe(true);
  });
});
