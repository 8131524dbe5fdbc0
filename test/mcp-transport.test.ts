import { gzipSync } from 'node:zlib';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AccessControlHandle } from '../core/access/index.js';
import { createApiKey } from '../core/auth/index.js';
import { upsertCompanies } from '../core/companies/write-companies.js';
import { errorCatalogue, requestIdSchema } from '../core/errors/index.js';
import { connectClient, createToolOrganization, initializeRequest, json, rpc, sampleGroup, startTestMcp, type TestMcp, type ToolOrganization } from './mcp-fixtures.js';
import { viaPort } from './api-fixtures.js';
import { killChildren } from './support/child-processes.js';
import { serviceEntries, startServiceProcess } from './support/service-processes.js';
import { eventsOnBus } from './support/usage-bus.js';
import { rawRequest } from './support/raw-request.js';
import { hostAndPort, startTcpProxy } from './support/tcp-proxy.js';

// The tool server's HTTP edge: the spec's connectivity check, authentication on every
// request, and protocol-level errors.

let mcp: TestMcp;
let org: ToolOrganization;

beforeAll(async () => {
  mcp = await startTestMcp();
  org = await createToolOrganization(mcp.db);
});
afterAll(async () => {
  await mcp?.close();
});

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });

describe('initialize (the spec\'s connectivity check)', () => {
  it('when a valid key sends initialize with protocol 2025-06-18 and both Accept types then it returns the server name and capabilities as JSON', async () => {
    const res = await rpc(mcp.mcpUrl, initializeRequest('2025-06-18'), auth(org.key));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/application\/json/);
    expect(requestIdSchema.safeParse(res.headers.get('x-request-id')).success).toBe(true);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    const body = await json(res);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 1, result: { protocolVersion: '2025-06-18', serverInfo: { name: 'italian-company-data' }, capabilities: { tools: {} } } });
    expect(typeof body.result.instructions).toBe('string');
  });

  it('when the client asks for a newer protocol version the SDK supports then that version is negotiated', async () => {
    const res = await rpc(mcp.mcpUrl, initializeRequest('2025-11-25'), auth(org.key));
    expect((await json(res)).result.protocolVersion).toBe('2025-11-25');
  });

  it('when the client ranks text/event-stream first then the answer comes as an SSE stream', async () => {
    const res = await rpc(mcp.mcpUrl, initializeRequest(), { ...auth(org.key), Accept: 'text/event-stream, application/json' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const text = await res.text();
    const data = text.split('\n').filter((l) => l.startsWith('data: ') && l.length > 6).map((l) => JSON.parse(l.slice(6)));
    expect(data.find((d) => d.id === 1)?.result.serverInfo.name).toBe('italian-company-data');
  });
});

describe('authentication on every request', () => {
  const expect401 = async (res: Response, code: string) => {
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const body = await json(res);
    expect(body.error.code).toBe(code);
    expect(typeof body.error.message).toBe('string');
    expect(requestIdSchema.safeParse(body.error.requestId).success).toBe(true);
    expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
  };

  it('when no Authorization header is sent then 401 missing_api_key with WWW-Authenticate: Bearer', async () => {
    await expect401(await rpc(mcp.mcpUrl, initializeRequest()), 'missing_api_key');
  });

  it('when two Authorization headers are sent then 401 missing_api_key, whichever comes first', async () => {
    for (const keys of [[org.key, 'sk_live_00000000000000000000000000000000'], ['sk_live_00000000000000000000000000000000', org.key]]) {
      const res = await rawRequest(mcp.mcpUrl, {
        method: 'POST',
        headers: ['Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream', ...keys.flatMap((k) => ['Authorization', `Bearer ${k}`])],
        body: JSON.stringify(initializeRequest()),
      });
      expect(res.status, res.body).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(JSON.parse(res.body).error).toMatchObject({ code: 'missing_api_key', message: expect.stringContaining('2 Authorization headers') });
    }
  });

  it('when the key is in the URL instead of the header then 401 missing_api_key saying so, as the API does', async () => {
    const res = await rpc(`${mcp.mcpUrl}?api_key=${org.key}`, initializeRequest());
    await expect401(res.clone(), 'missing_api_key');
    expect((await json(res)).error.message).toBe('API keys are not accepted in the URL: send Authorization: Bearer <API_KEY> only, and take the key out of the URL.');
    // Percent-encoded, the same: a server that reads the URL decodes it.
    const encoded = await rpc(`${mcp.mcpUrl}?x=${org.key.replaceAll('_', '%5F')}`, initializeRequest(), auth(org.key));
    await expect401(encoded.clone(), 'missing_api_key');
    // Its answers, as the API's, tell browsers not to sniff them into something else.
    expect(encoded.headers.get('x-content-type-options')).toBe('nosniff');
    const served = await rpc(mcp.mcpUrl, initializeRequest(), auth(org.key));
    expect(served.status).toBe(200);
    expect(served.headers.get('x-content-type-options')).toBe('nosniff');
  });

  // The refusal's message, as the API words it (core/auth/key-refusal.ts).
  const refusal = async (key: string) => {
    const res = await rpc(mcp.mcpUrl, initializeRequest(), auth(key));
    await expect401(res.clone(), 'invalid_api_key');
    return (await json(res)).error.message as string;
  };

  it('when the key is unknown then 401 invalid_api_key with the catalogue\'s message', async () => {
    expect(await refusal('sk_live_00000000000000000000000000000000')).toBe(errorCatalogue.invalid_api_key.message);
  });

  it('when the token is not shaped like a key then 401 invalid_api_key saying what a key looks like', async () => {
    expect(await refusal(org.key.slice(0, -2))).toBe('The bearer token does not look like an API key: keys are sk_live_ or sk_test_ followed by 32 letters and digits (this one has 30 after sk_live_: copy the whole key).');
  });

  it('when the key is revoked then 401 invalid_api_key saying when', async () => {
    const created = await createApiKey(mcp.db, { organizationId: org.organizationId, name: 'to revoke' });
    await mcp.db('api_keys').where({ id: created.record.id }).update({ revoked_at: new Date('2025-03-04T05:06:07Z') });
    expect(await refusal(created.key)).toBe('This API key was revoked on 2025-03-04 05:06 UTC. Use another key of the organization, or have an admin create one in the dashboard.');
  });

  it('when the key has expired then 401 invalid_api_key saying when', async () => {
    const created = await createApiKey(mcp.db, { organizationId: org.organizationId, name: 'to expire', expiresAt: new Date(Date.now() + 60_000) });
    await mcp.db('api_keys').where({ id: created.record.id }).update({ expires_at: new Date('2025-01-31T23:59:59.999Z') });
    expect(await refusal(created.key)).toBe('This API key expired on 2025-01-31 23:59 UTC. If it was rotated, use its replacement; otherwise have an admin create a key in the dashboard.');
  });

  it('when the key is a personal key then 401 invalid_api_key saying so', async () => {
    const created = await createApiKey(mcp.db, { organizationId: org.organizationId, name: 'personal', kind: 'personal' });
    expect(await refusal(created.key)).toBe('This is a personal API key: the API and the tool server take organization keys only. Use an organization key (dashboard, API keys).');
  });

  it('when a later request (tools/list) carries a revoked key then it is refused too', async () => {
    const created = await createApiKey(mcp.db, { organizationId: org.organizationId, name: 'revoked later' });
    expect((await rpc(mcp.mcpUrl, initializeRequest(), auth(created.key))).status).toBe(200);
    await mcp.db('api_keys').where({ id: created.record.id }).update({ revoked_at: new Date() });
    // Revocation reaches the key cache by notification; allow it a moment.
    let status = 0;
    for (let i = 0; i < 50 && status !== 401; i++) {
      status = (await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, auth(created.key))).status;
      if (status !== 401) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(401);
  });

  it('when the key store cannot be reached then 503 auth_unavailable, not 401', async () => {
    const down = await startTestMcp({ databaseUrl: viaPort(inject('databaseUrl'), 1) });
    try {
      const res = await rpc(down.mcpUrl, initializeRequest(), auth(org.key));
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect((await json(res)).error.code).toBe('auth_unavailable');
    } finally {
      await down.close();
    }
  });
});

describe('when the organization\'s plan cannot be read', () => {
  it('when the database is gone and the key cached then a request with no tool call is refused as a JSON-RPC error, entitlement_unavailable, 503 with Retry-After, the error object a tools/list in a batch gets; the key\'s refusals keep the envelope', async () => {
    const databaseUrl = inject('databaseUrl');
    // The organization first, and the server's change notifications heard before it connects:
    // a notification of the organization's creation arriving late would drop its cached plan,
    // which the refusals count against (RateLimit-*).
    const own = await createToolOrganization(mcp.db);
    const proxy = await startTcpProxy(hostAndPort(databaseUrl));
    const down = await startTestMcp({ databaseUrl: proxy.urlFor(databaseUrl) });
    await (down.access as AccessControlHandle).ready();
    const client = await connectClient(down.mcpUrl, own.key);
    const versioned = { ...auth(own.key), 'Mcp-Protocol-Version': '2025-06-18' };
    const withoutIds = (value: unknown) => JSON.stringify(value).replace(/req_[0-9a-f-]{36}/g, 'req_*');
    const refusal = (id: number | null, requestId: string | null) => ({
      jsonrpc: '2.0',
      id,
      error: { code: -32000, message: 'Plan and allowance state is temporarily unavailable. Retry with backoff.', data: { code: 'entitlement_unavailable', requestId, retryAfterSeconds: 1 } },
    });
    const expectRefusal = async (res: Response, id: number | null) => {
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(res.headers.get('ratelimit-limit')).not.toBeNull();
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const body = await json(res);
      expect(body).toEqual(refusal(id, res.headers.get('x-request-id')));
      return body;
    };
    try {
      proxy.cut();
      // The cached plan is dropped when the listening connection goes, or a second later at most.
      let lone = await rpc(down.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, versioned);
      for (let i = 0; i < 50 && lone.status === 200; i++) {
        await new Promise((r) => setTimeout(r, 100));
        lone = await rpc(down.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, versioned);
      }
      const loneBody = await expectRefusal(lone, 2);
      await expectRefusal(await rpc(down.mcpUrl, initializeRequest(), auth(own.key)), 1);
      await expectRefusal(await rpc(down.mcpUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, versioned), null);
      await expectRefusal(await rpc(down.mcpUrl, [{ jsonrpc: '2.0', id: 2, method: 'tools/list' }], versioned), null);
      await expectRefusal(await fetch(down.mcpUrl, { headers: { ...auth(own.key), Accept: 'text/event-stream' } }), null);

      // In a batch with a tool call (admitted by the tool, not before), the tools/list is
      // answered in place with the same error object.
      const batch = await rpc(down.mcpUrl, [
        { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'service_search_companies', arguments: { query: 'rossi' } } },
      ], versioned);
      expect(batch.status).toBe(200);
      const [listed, called] = (await json(batch)) as [unknown, { result: { structuredContent: { error: { code: string } } } }];
      expect(withoutIds(listed)).toBe(withoutIds(loneBody));
      expect(called.result.structuredContent.error.code).toBe('entitlement_unavailable');

      // The official client reads the refusal as an HTTP error that carries it.
      await expect(client.listTools()).rejects.toMatchObject({ code: 503, message: expect.stringContaining('"code":"entitlement_unavailable"') });

      // A key that cannot be checked is still refused in the API's envelope.
      const unknownKey = await rpc(down.mcpUrl, initializeRequest(), auth('sk_live_00000000000000000000000000000000'));
      expect(unknownKey.status).toBe(503);
      expect((await json(unknownKey)).error.code).toBe('auth_unavailable');
    } finally {
      await client.close();
      await proxy.close();
      await down.close();
    }
  });
});

describe('protocol-level errors', () => {
  it('when GET or DELETE /mcp is sent then 405 with a JSON-RPC error carrying data.code and data.requestId', async () => {
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(mcp.mcpUrl, { method, headers: { ...auth(org.key), Accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      const body = await json(res);
      expect(body.jsonrpc).toBe('2.0');
      expect(body.error.data.code).toBe('unknown_endpoint');
      expect(requestIdSchema.safeParse(body.error.data.requestId).success).toBe(true);
    }
  });

  it('when only notifications or client responses are posted, alone or in a batch, then 202 with no body and no Content-Type', async () => {
    const versioned = { ...auth(org.key), 'Mcp-Protocol-Version': '2025-06-18' };
    for (const body of [
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      [{ jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 5 } }],
      { jsonrpc: '2.0', id: 5, result: {} },
    ]) {
      const res = await rawRequest(mcp.mcpUrl, {
        method: 'POST',
        headers: ['Content-Type', 'application/json', 'Accept', 'application/json, text/event-stream', ...Object.entries(versioned).flat()],
        body: JSON.stringify(body),
      });
      expect({ status: res.status, body: res.body, type: res.headers['content-type'], length: res.headers['content-length'] }, JSON.stringify(body)).toEqual({ status: 202, body: '', type: undefined, length: '0' });
      expect(res.headers['ratelimit-limit']).toBeDefined();
    }
  });

  it('when the Accept header lacks text/event-stream then 406 with data.code invalid_params', async () => {
    const res = await rpc(mcp.mcpUrl, initializeRequest(), { ...auth(org.key), Accept: 'application/json' });
    expect(res.status).toBe(406);
    expect((await json(res)).error.data.code).toBe('invalid_params');
  });

  it('when the body is not JSON then 400 parse error with data.code', async () => {
    const res = await fetch(mcp.mcpUrl, { method: 'POST', headers: { ...auth(org.key), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{not json' });
    expect(res.status).toBe(400);
    const body = await json(res);
    expect(body.error.code).toBe(-32700);
    expect(body.error.data.code).toBe('invalid_params');
  });

  it('when the body is not UTF-8, is declared in another charset, or is compressed then it is refused saying so, not read as other text (and billed)', async () => {
    const headers = { ...auth(org.key), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    const call = (query: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"service_search_companies","arguments":{"query":"${query}"}}}`;
    const latin1 = Buffer.from(call('Forl\u00ec'), 'latin1');
    const refused = async (res: Response, status: number, rpcCode: number, message: string) => {
      expect(res.status, message).toBe(status);
      const body = await json(res);
      expect(body.error, message).toMatchObject({ code: rpcCode, message, data: { code: 'invalid_params' } });
    };
    await refused(await fetch(mcp.mcpUrl, { method: 'POST', headers, body: latin1 }), 400, -32700,
      'Parse error: the body is not valid UTF-8, as JSON must be: send text as UTF-8.');
    await refused(await fetch(mcp.mcpUrl, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json; charset=ISO-8859-1' }, body: latin1 }), 415, -32000,
      'Unsupported charset "ISO-8859-1": JSON is sent as UTF-8 (Content-Type: application/json, or with charset=utf-8).');
    await refused(await fetch(mcp.mcpUrl, { method: 'POST', headers: { ...headers, 'Content-Encoding': 'gzip' }, body: gzipSync(call('rossi')) }), 415, -32000,
      'Unsupported Content-Encoding "gzip": send the body uncompressed.');
    // UTF-8 said so, or as identity, is served.
    for (const extra of [{ 'Content-Type': 'application/json; charset="UTF-8"' }, { 'Content-Encoding': 'identity' }] as Array<Record<string, string>>) {
      const res = await fetch(mcp.mcpUrl, { method: 'POST', headers: { ...headers, ...extra }, body: Buffer.from(call('Forl\u00ec'), 'utf8') });
      expect(res.status, JSON.stringify(extra)).toBe(200);
      expect((await json(res)).result.isError, JSON.stringify(extra)).toBeFalsy();
    }
  });

  it('when a method does not exist then a JSON-RPC method-not-found error with data.code and data.requestId', async () => {
    const res = await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 7, method: 'resources/list' }, { ...auth(org.key), 'Mcp-Protocol-Version': '2025-06-18' });
    const body = await json(res);
    expect(body.id).toBe(7);
    expect(body.error.code).toBe(-32601);
    expect(body.error.data).toMatchObject({ code: 'unknown_endpoint', requestId: res.headers.get('x-request-id') });
  });

  it('when an unknown tool is called then a JSON-RPC invalid-params error names it', async () => {
    const res = await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'service_no_such_tool', arguments: {} } }, auth(org.key));
    const body = await json(res);
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain('service_no_such_tool');
    expect(body.error.data.code).toBe('unknown_endpoint');
  });

  it('when tools/call has no params, or arguments that are not an object, then invalid params (-32602) naming the field, not an internal error', async () => {
    const cases: [unknown, string][] = [
      [undefined, 'params'],
      [{ name: 'service_get_company_profile', arguments: 'LMBDNC79E13H199R' }, 'params.arguments'],
      [{ arguments: {} }, 'params.name'],
    ];
    for (const [params, path] of cases) {
      const res = await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 9, method: 'tools/call', ...(params !== undefined && { params }) }, auth(org.key));
      expect(res.status).toBe(200);
      const body = await json(res);
      expect(body.id).toBe(9);
      expect(body.error).toMatchObject({ code: -32602, message: 'Invalid params for tools/call.', data: { code: 'invalid_params', requestId: res.headers.get('x-request-id') } });
      expect(body.error.data.details.map((d: { path: string }) => d.path)).toContain(path);
    }
  });

  it('when tools/list or initialize has malformed params, then invalid params (-32602) naming the field', async () => {
    const list = await json(await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { cursor: 5 } }, auth(org.key)));
    expect(list.error).toMatchObject({ code: -32602, message: 'Invalid params for tools/list.', data: { code: 'invalid_params', details: [{ path: 'params.cursor' }] } });
    const init = await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'initialize', params: { protocolVersion: '2025-06-18' } }, auth(org.key));
    expect(init.status).toBe(200);
    const body = await json(init);
    expect(body).toMatchObject({ id: 4, error: { code: -32602, message: 'Invalid params for initialize.', data: { code: 'invalid_params', requestId: init.headers.get('x-request-id') } } });
    expect(body.error.data.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['params.capabilities', 'params.clientInfo']));
  });

  it('when a batch holds a tools/call with bad params, then that call alone gets invalid params', async () => {
    const res = await rpc(mcp.mcpUrl, [
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'service_get_company_profile', arguments: 42 } },
    ], auth(org.key));
    const [list, call] = (await json(res)) as [{ id: number; result: { tools: unknown[] } }, { id: number; error: { code: number; data: { code: string } } }];
    expect(list.id).toBe(1);
    expect(list.result.tools.length).toBeGreaterThan(0);
    expect(call).toMatchObject({ id: 2, error: { code: -32602, data: { code: 'invalid_params' } } });
  });

  it('when a batch holds a billed call and errors the SDK answers itself, then each answer has a requestId of its own and only the billed call\'s names its usage event', async () => {
    const group = sampleGroup();
    await upsertCompanies(mcp.db, [group.root]);
    const own = await createToolOrganization(mcp.db);
    const batch = [
      { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'service_get_company_profile', arguments: { taxId: group.root.fiscalCode } } },
      { jsonrpc: '2.0', id: 2, method: 'resources/list' },
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'service_search_companies', arguments: 'rossi' } },
    ];
    for (const accept of ['application/json, text/event-stream', 'text/event-stream, application/json']) {
      const res = await rpc(mcp.mcpUrl, batch, { ...auth(own.key), Accept: accept });
      expect(res.status).toBe(200);
      const text = await res.text();
      const answers = (accept.startsWith('text/event-stream') ? text.split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6))) : JSON.parse(text)) as {
        id: number;
        result?: { _meta: { requestId: string } };
        error?: { code: number; data: { requestId: string } };
      }[];
      const byId = new Map(answers.map((a) => [a.id, a]));
      const billed = byId.get(1)!.result!._meta.requestId;
      const unknownMethod = byId.get(2)!.error!;
      const badParams = byId.get(3)!.error!;
      expect([unknownMethod.code, badParams.code]).toEqual([-32601, -32602]);
      const ids = [billed, unknownMethod.data.requestId, badParams.data.requestId];
      for (const id of ids) expect(requestIdSchema.safeParse(id).success, id).toBe(true);
      expect(new Set(ids).size).toBe(3);
      // The billed call's id is the usage event's; neither error's id names an event.
      expect(await eventsOnBus(mcp.db, { eventId: billed })).toHaveLength(1);
      for (const id of ids.slice(1)) expect(await eventsOnBus(mcp.db, { eventId: id })).toEqual([]);
    }
  });

  it('when a batch repeats a request id then the whole batch is refused as an invalid request naming the id, and nothing runs or is billed', async () => {
    const group = sampleGroup();
    await upsertCompanies(mcp.db, [group.root]);
    const own = await createToolOrganization(mcp.db);
    const call = (id: number | string, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
    const batch = [
      call(9, 'service_get_company_profile', { taxId: group.root.fiscalCode }),
      call(9, 'service_get_company_structure', { fiscalCode: group.root.fiscalCode }),
      call('9', 'service_search_companies', { query: group.token }),
    ];
    // Refused alike whether the answer would have been JSON or an event stream.
    for (const accept of ['application/json, text/event-stream', 'text/event-stream, application/json']) {
      const res = await rpc(mcp.mcpUrl, batch, { ...auth(own.key), Accept: accept });
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual({
        jsonrpc: '2.0',
        id: null,
        error: {
          code: -32600,
          message: 'Invalid request: each request of a batch needs an id of its own; repeated: 9.',
          data: { code: 'invalid_params', requestId: res.headers.get('x-request-id'), details: [{ path: '1.id', message: 'repeats the id 9 of request 0' }] },
        },
      });
    }
    // Nothing ran: no usage event on the bus, none in the ledger (were a billing worker quick).
    expect(await eventsOnBus(mcp.db, { organizationId: own.organizationId })).toEqual([]);
    expect(await mcp.db('usage_ledger').where({ organization_id: own.organizationId, entry_type: 'usage' })).toEqual([]);
  });

  it('when a batch is refused whole then its answer\'s id is null, not its first request\'s', async () => {
    const ping = (id: number) => ({ jsonrpc: '2.0', id, method: 'ping' });
    const tooMany = await rpc(mcp.mcpUrl, Array.from({ length: 21 }, (_, i) => ping(i)), auth(org.key));
    expect(tooMany.status).toBe(400);
    expect(await json(tooMany)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
    const single = await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 7, method: 42 }, auth(org.key));
    expect(await json(single)).toMatchObject({ id: 7, error: { code: -32600 } });
  });

  it('when a message of a batch, or a message alone, is malformed then the refusal names which and what is wrong with it; an empty or oversized batch is said as such', async () => {
    const refusal = async (body: unknown) => (await json(await rpc(mcp.mcpUrl, body, auth(org.key)))).error;
    const batch = await refusal([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '1.0', id: 2, method: 'ping' },
      { jsonrpc: '2.0', id: 3 },
      { jsonrpc: '2.0', id: true, method: 'ping' },
      { jsonrpc: '2.0', id: 5, method: 'ping', params: { _meta: 'x' } },
    ]);
    expect(batch).toMatchObject({ code: -32600, message: 'Invalid request: not a JSON-RPC 2.0 message (messages 1, 2, 3, 4 of the batch); details say what is wrong.' });
    expect(batch.data.details).toEqual([
      { path: '1.jsonrpc', message: 'must be "2.0"' },
      { path: '2', message: 'neither a request or notification (no method) nor a response (no result or error)' },
      { path: '3.id', message: 'must be a string or an integer' },
      { path: '4.params._meta', message: 'must be an object' },
    ]);
    expect((await refusal({ jsonrpc: '2.0', id: 7, method: 42 })).data.details).toEqual([{ path: 'method', message: 'must be a string' }]);
    expect((await refusal([])).message).toBe('Invalid request: an empty batch; a batch holds at least one message.');
    expect((await refusal(Array.from({ length: 21 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'ping' })))).message).toBe('Invalid request: a batch of 21 messages; a batch holds at most 20.');
  });

  it('when the official SDK client is pointed at /mcp/ (a trailing slash) then it connects, lists and calls tools there as at /mcp, with no redirect', async () => {
    const own = await createToolOrganization(mcp.db);
    const client = await connectClient(`${mcp.url}/mcp/`, own.key);
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('service_search_companies');
      const result = await client.callTool({ name: 'service_get_company_profile', arguments: { taxId: '00000000001' } });
      expect(result.structuredContent).toMatchObject({ error: { code: 'not_found' } });
    } finally {
      await client.close();
    }
    const res = await rpc(`${mcp.url}/mcp/`, initializeRequest(), auth(own.key));
    expect(res.status).toBe(200);
    expect(res.headers.get('location')).toBeNull();
    expect((await json(res)).result.serverInfo.name).toBe('italian-company-data');
  });

  it('when a path other than /mcp is requested then 404 unknown_endpoint in the error envelope', async () => {
    const res = await fetch(`${mcp.url}/other`, { headers: auth(org.key) });
    expect(res.status).toBe(404);
    expect((await json(res)).error).toMatchObject({ code: 'unknown_endpoint', message: 'No endpoint matches this path: the tool server is at /mcp.' });
  });

  it('when a client looks for OAuth after a refused key (as mcp-remote does) then the 404 says the server takes an API key and that the key was refused', async () => {
    const refused = await rpc(`${mcp.url}/mcp`, initializeRequest(), auth('sk_live_00000000000000000000000000000000'));
    expect(refused.status).toBe(401);
    for (const [method, path] of [
      ['GET', '/.well-known/oauth-protected-resource'], ['GET', '/.well-known/oauth-protected-resource/mcp'],
      ['GET', '/.well-known/oauth-authorization-server'], ['GET', '/.well-known/openid-configuration'],
      ['POST', '/register'], ['GET', '/authorize'], ['POST', '/token'],
    ] as const) {
      const res = await fetch(`${mcp.url}${path}`, { method, headers: { 'Content-Type': 'application/json' }, ...(method === 'POST' && { body: '{}' }) });
      expect(res.status, path).toBe(404);
      const { error } = await json(res);
      expect(error.code, path).toBe('unknown_endpoint');
      expect(error.message, path).toMatch(/^This tool server has no OAuth: it takes an API key, sent on \/mcp as "Authorization: Bearer sk_live_…"\. .*sent no key or one that was refused \(missing_api_key, invalid_api_key\)/);
    }
  });
});

// DNS rebinding: a page of another site whose name is made to resolve to the server's address
// calls it as its own origin. The transport spec requires servers to validate Origin.
describe('the Origin header', () => {
  const versioned = (key: string) => ({ ...auth(key), 'Mcp-Protocol-Version': '2025-06-18' });
  const expectRefused = async (res: Response, origin: string) => {
    expect(res.status).toBe(403);
    expect(await json(res)).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32000,
        message: `Forbidden: requests from the origin ${origin} are not accepted. A browser client's origin must be listed in the tool server's MCP_ALLOWED_ORIGINS.`,
        data: { code: 'invalid_params', requestId: res.headers.get('x-request-id') },
      },
    });
    // Nothing a page of that origin may read, and refused before the key and the rate.
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
    expect(res.headers.get('access-control-allow-methods')).toBeNull();
    expect(res.headers.get('ratelimit-limit')).toBeNull();
  };
  const initialize = (url: string, key: string, origin?: string) => rpc(url, initializeRequest(), { ...auth(key), ...(origin !== undefined && { Origin: origin }) });

  it('when a request carries an Origin not allowed then every method on /mcp is refused 403 as a JSON-RPC error, before the key and the rate are checked, and nothing is billed', async () => {
    const group = sampleGroup();
    await upsertCompanies(mcp.db, [group.root]);
    const own = await createToolOrganization(mcp.db, { ratePerMinute: 3 });
    const profile = { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'service_get_company_profile', arguments: { taxId: group.root.fiscalCode } } };
    // A rebound name on the server's own address and port is refused as any other site is.
    const rebound = `http://rebound.test:${new URL(mcp.url).port}`;
    for (const origin of ['https://evil.example', rebound, 'null']) {
      for (const path of ['/mcp', '/mcp/']) {
        await expectRefused(await rpc(`${mcp.url}${path}`, profile, { ...versioned(own.key), Origin: origin }), origin);
        await expectRefused(await rpc(`${mcp.url}${path}`, [profile], { ...versioned(own.key), Origin: origin }), origin);
      }
      for (const method of ['GET', 'DELETE']) await expectRefused(await fetch(mcp.mcpUrl, { method, headers: { ...versioned(own.key), Accept: 'text/event-stream', Origin: origin } }), origin);
      // A preflight gets no CORS headers, so the browser never sends the request it asks about.
      await expectRefused(await fetch(mcp.mcpUrl, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' } }), origin);
      // Refused whatever the key: a page without one learns nothing more.
      await expectRefused(await initialize(mcp.mcpUrl, 'sk_live_00000000000000000000000000000000', origin), origin);
    }
    expect(await eventsOnBus(mcp.db, { organizationId: own.organizationId })).toEqual([]);
    // None of those counted against the organization's 3 calls a minute.
    const served = await rpc(mcp.mcpUrl, profile, versioned(own.key));
    expect(served.status).toBe(200);
    expect(served.headers.get('ratelimit-remaining')).toBe('2');
  });

  it('when a request carries a loopback Origin, of any port, or none then it is served, with the CORS headers', async () => {
    for (const origin of ['http://localhost:6274', 'http://127.0.0.1:5173', 'http://[::1]:8080', 'http://localhost', undefined]) {
      const res = await initialize(mcp.mcpUrl, org.key, origin);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect((await json(res)).result.serverInfo.name).toBe('italian-company-data');
    }
    const preflight = await fetch(mcp.mcpUrl, { method: 'OPTIONS', headers: { Origin: 'http://localhost:6274', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'authorization, content-type' } });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-methods')).toBe('POST, OPTIONS');
    // Only loopback: a name that merely starts like one, or https on a loopback name, is another site.
    for (const origin of ['http://localhost.evil.example', 'http://127.0.0.1.evil.example:3001', 'https://localhost:6274']) await expectRefused(await initialize(mcp.mcpUrl, org.key, origin), origin);
  });

  it('when origins are configured (MCP_ALLOWED_ORIGINS, PUBLIC_MCP_URL) then those are served besides loopback ones, and with * any origin is', async () => {
    const listed = await startTestMcp({ origins: { allowed: ['https://app.example.com'], publicUrl: 'https://mcp.example.com/base' } });
    const any = await startTestMcp({ origins: { allowed: '*' } });
    try {
      for (const origin of ['https://app.example.com', 'https://mcp.example.com', 'http://localhost:6274']) expect((await initialize(listed.mcpUrl, org.key, origin)).status, origin).toBe(200);
      for (const origin of ['https://other.example.com', 'http://app.example.com', 'https://app.example.com:8443']) await expectRefused(await initialize(listed.mcpUrl, org.key, origin), origin);
      for (const origin of ['https://other.example.com', 'null']) expect((await initialize(any.mcpUrl, org.key, origin)).status, origin).toBe(200);
    } finally {
      await listed.close();
      await any.close();
    }
  });

  describe('MCP_ALLOWED_ORIGINS of a tool server run alone', () => {
    const children: ChildProcess[] = [];
    afterAll(() => killChildren(children));
    const env = (origins: string) => ({ DATABASE_URL: inject('databaseUrl'), MIGRATE_ON_START: 'false', KAFKA_BROKERS: '', MCP_ALLOWED_ORIGINS: origins });

    it('when it lists origins then the process serves those and loopback ones, and refuses others', async () => {
      const service = await startServiceProcess(serviceEntries.mcp, env('https://app.example.com, https://Inspector.Example.com:443'), children);
      for (const origin of ['https://app.example.com', 'https://inspector.example.com', 'http://localhost:6274']) expect((await initialize(`${service.baseUrl}/mcp`, org.key, origin)).status, origin).toBe(200);
      await expectRefused(await initialize(`${service.baseUrl}/mcp`, org.key, 'https://evil.example'), 'https://evil.example');
    }, 60_000);

    it('when an entry is not an origin then the process does not start, naming the variable and the entry', async () => {
      const problem = 'MCP_ALLOWED_ORIGINS: "https://app.example.com/" is not an origin: write http(s)://host[:port] with nothing after it, e.g. https://app.example.com';
      await expect(startServiceProcess(serviceEntries.mcp, env('https://app.example.com/'), children)).rejects.toThrow(JSON.stringify(`could not start: Invalid configuration:\n  - ${problem}`));
    }, 60_000);
  });
});
