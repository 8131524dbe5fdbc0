import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCompanyStore } from '../core/companies/index.js';
import { createDb, migrateLatest, type Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageSink } from '../core/usage/index.js';
import { createTestOrganization, insertCompanies, makeDossier, startTestApi, type TestApi } from './api-fixtures.js';
import { createToolOrganization, rpc, startTestMcp, type TestMcp } from './mcp-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { slowed } from './support/slowed-store.js';
import { eventsOnBus } from './support/usage-bus.js';

// A caller that hangs up before its answer is ready (its own timeout fired, say) is not
// charged: nobody can receive that answer, and a client that retries would otherwise pay twice.
// The company lookups here take 400 ms; the caller sends its request and closes the connection
// 100 ms later. Usage events go to a bus database of this file's own, which no billing worker
// drains, so the events published are exactly those on it.

const silent = createLogger({ level: 'silent' });
const company = makeDossier();
const LOOKUP_MS = 400;
let scratch: ScratchDatabase;
let bus: Db;
let api: TestApi;
let mcp: TestMcp;

/** Sends `request` on a new connection, closes it after `closeAfterMs` and resolves once closed, with whatever came back. */
function hangUp(url: string, request: string, closeAfterMs: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let received = '';
    const socket = net.connect(Number(port), hostname, () => {
      socket.write(request);
      setTimeout(() => socket.destroy(), closeAfterMs);
    });
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('error', () => {});
    socket.on('close', () => resolve(received));
  });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, LOOKUP_MS * 2));

let companies: Db;

beforeAll(async () => {
  scratch = await createScratchDatabase('caller_gone_bus');
  bus = createDb({ connectionString: scratch.url, poolMax: 3 });
  await migrateLatest(bus);
  companies = createDb({ connectionString: inject('databaseUrl'), poolMax: 2 });
  await insertCompanies(companies, [company]);
  const store = () => slowed(createCompanyStore({ db: companies, queryTimeoutMs: 5_000, logger: silent }), LOOKUP_MS);
  api = await startTestApi({ usage: createPostgresUsageSink(bus, { logger: silent }), store: store() });
  mcp = await startTestMcp({ usage: createPostgresUsageSink(bus, { logger: silent }), store: store() });
});
afterAll(async () => {
  await mcp?.close();
  await api?.close();
  await companies?.destroy();
  await bus?.destroy();
  await scratch?.drop();
});

describe('when an API caller closes the connection before its answer is ready', () => {
  it('then no usage event is published, so the call is not charged; a caller that waits is charged once', async () => {
    const org = await createTestOrganization(api.db);
    const path = `/companies/${company.fiscalCode}/credit-report`;
    const received = await hangUp(api.url, `GET ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${org.key}\r\n\r\n`, 100);
    expect(received).toBe('');
    await settle();
    expect(await eventsOnBus(bus, { organizationId: org.organizationId })).toEqual([]);

    const served = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${org.key}` } });
    expect(served.status).toBe(200);
    expect((await eventsOnBus(bus, { organizationId: org.organizationId })).map((e) => e.eventId)).toEqual([served.headers.get('x-request-id')]);
  });
});

describe('when a tool caller closes the connection before its result is ready', () => {
  it('then no usage event is published, so the call is not charged; a caller that waits is charged once', async () => {
    const org = await createToolOrganization(mcp.db);
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'service_get_company_profile', arguments: { taxId: company.fiscalCode } } };
    const body = JSON.stringify(call);
    const request = [
      'POST /mcp HTTP/1.1', 'Host: x', `Authorization: Bearer ${org.key}`, 'Content-Type: application/json',
      'Accept: application/json, text/event-stream', `Content-Length: ${Buffer.byteLength(body)}`, '', body,
    ].join('\r\n');
    expect(await hangUp(mcp.url, request, 100)).toBe('');
    await settle();
    expect(await eventsOnBus(bus, { organizationId: org.organizationId })).toEqual([]);

    const served = await rpc(mcp.mcpUrl, call, { Authorization: `Bearer ${org.key}` });
    expect(served.status).toBe(200);
    const answer = (await served.json()) as { result: { isError?: boolean; _meta: { requestId: string } } };
    expect(answer.result.isError).toBeUndefined();
    expect((await eventsOnBus(bus, { organizationId: org.organizationId })).map((e) => e.eventId)).toEqual([answer.result._meta.requestId]);
  });
});
