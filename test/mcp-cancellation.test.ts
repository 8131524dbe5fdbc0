import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCompanyStore } from '../core/companies/index.js';
import { createDb, migrateLatest, type Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageSink, meteringUnavailable, type UsageSink } from '../core/usage/index.js';
import { insertCompanies, makeDossier } from './api-fixtures.js';
import { createToolOrganization, rpc, startTestMcp, type TestMcp } from './mcp-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { slowed } from './support/slowed-store.js';
import { eventsOnBus } from './support/usage-bus.js';

// A batch that carries a request and a `notifications/cancelled` naming it: the POST is answered
// at once without that request's answer (the MCP specification: the receiver of a cancellation
// should not respond to the request), and a cancelled tools/call is not charged. Before, the
// SDK's Server aborted the request and sent nothing for it, so the POST was never answered, and
// the tool call was billed all the same. Also: the safety deadline of a batch's answer, which
// gives up a call still working but waits for one already publishing its usage event (before,
// such a call was answered internal_error and charged all the same).
// Usage events go to a bus database of this file's own, which no billing worker drains, so the
// events published are exactly those on it.

const silent = createLogger({ level: 'silent' });
const company = makeDossier();
const LOOKUP_MS = 600;
const DEADLINE_MS = 200;
/** How late the publishing server's usage events start to be published: well past DEADLINE_MS. */
const PUBLISH_DELAY_MS = 500;
/** How late its company reports (service_analyze_company) are looked up: well past PUBLISH_DELAY_MS. */
const REPORT_LOOKUP_MS = 1_500;
/** Organizations whose usage events the publishing server refuses (once PUBLISH_DELAY_MS has passed). */
const refusing = new Set<string>();
const lines: Record<string, unknown>[] = [];
let scratch: ScratchDatabase;
let bus: Db;
let companies: Db;
let mcp: TestMcp;
let slowMcp: TestMcp;
let publishingMcp: TestMcp;

/** `sink` with every publish starting PUBLISH_DELAY_MS late, and refused then (entitlement_unavailable, as a sink past its own deadline refuses) for the organizations in `refusing`. */
function latePublishing(sink: UsageSink): UsageSink {
  return {
    publish: async (event) => {
      await new Promise((resolve) => setTimeout(resolve, PUBLISH_DELAY_MS));
      if (refusing.has(event.organizationId)) throw meteringUnavailable(new Error('the test refuses this organization\'s events'));
      return sink.publish(event);
    },
    close: () => sink.close(),
  };
}

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
  publishingMcp = await startTestMcp({
    usage: latePublishing(createPostgresUsageSink(bus, { logger: silent })),
    store: slowed(createCompanyStore({ db: companies, queryTimeoutMs: 5_000, logger: silent }), REPORT_LOOKUP_MS, ['companyReport']),
    answerDeadlineMs: DEADLINE_MS,
    logger,
  });
});
afterAll(async () => {
  await publishingMcp?.close();
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

describe('when the deadline falls while a batch\'s tool call is publishing its usage event', () => {
  const analyzeCall = (id: number) => toolCall(id, 'service_analyze_company', { fiscalCode: company.fiscalCode });
  type Answer = { id: number; result?: { isError?: boolean; _meta: { requestId: string; usage?: unknown }; structuredContent?: { error?: { code: string } } }; error?: { code: number; data: { code: string } } };

  it('then the POST waits for it and carries its result, charged once; a call still looking up is given up, internal_error, not charged', { timeout: 10_000 }, async () => {
    const org = await createToolOrganization(publishingMcp.db);
    const started = Date.now();
    // The profile is looked up at once and its event published from PUBLISH_DELAY_MS on; the
    // analysis still waits for its report at the deadline.
    const { res, text } = await post(publishingMcp.mcpUrl, [profileCall(1), analyzeCall(2), request(3, 'ping')], org.key);
    const answeredAfter = Date.now() - started;
    expect(res.status).toBe(200);
    const answers = JSON.parse(text) as Answer[];
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3]);
    expect(answers[0]!.error).toBeUndefined();
    expect(answers[0]!.result).toMatchObject({ _meta: { usage: expect.any(Object) } });
    expect(answers[0]!.result!.isError).toBeUndefined();
    expect(answers[1]!.error).toMatchObject({ code: -32603, data: { code: 'internal_error' } });
    expect(answers[2]!.result).toEqual({});
    // Answered once the event was published, not when the analysis ended.
    expect(answeredAfter).toBeGreaterThanOrEqual(PUBLISH_DELAY_MS - 10);
    expect(answeredAfter).toBeLessThan(REPORT_LOOKUP_MS);
    // Once the analysis has its report (and would have published its event), only the profile is charged.
    await new Promise((resolve) => setTimeout(resolve, REPORT_LOOKUP_MS + PUBLISH_DELAY_MS - answeredAfter));
    const events = await eventsOnBus(bus, { organizationId: org.organizationId });
    expect(events.map((e) => [e.eventId, e.product])).toEqual([[answers[0]!.result!._meta.requestId, 'service_get_company_profile']]);
    expect(lines.some((l) => l.msg === 'the call was cancelled, or its batch answered without it, before its result was ready: not sent, not charged' && l.organizationId === org.organizationId && l.tool === 'service_analyze_company')).toBe(true);
  });

  it('then a publish refused after the deadline is answered with its own refusal, not internal_error, and nothing is charged', { timeout: 10_000 }, async () => {
    const org = await createToolOrganization(publishingMcp.db);
    refusing.add(org.organizationId);
    const { res, text } = await post(publishingMcp.mcpUrl, [profileCall(1), request(2, 'ping')], org.key);
    expect(res.status).toBe(200);
    const answers = JSON.parse(text) as Answer[];
    expect(answers.map((a) => a.id)).toEqual([1, 2]);
    expect(answers[0]!.error).toBeUndefined();
    expect(answers[0]!.result).toMatchObject({ isError: true, structuredContent: { error: { code: 'entitlement_unavailable' } } });
    expect(answers[1]!.result).toEqual({});
    expect(await eventsOnBus(bus, { organizationId: org.organizationId })).toEqual([]);
  });
});
