import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createLogger } from '../core/logging/index.js';
import { connectClient, createToolOrganization, initializeRequest, rpc, startTestMcp, type TestMcp } from './mcp-fixtures.js';

// The tool server writes one line per request at info, as the API does: support finds an
// agent's call by the requestId the agent was given, even when the answer was a 200 carrying a
// not_found tool result.
const lines: Record<string, unknown>[] = [];
let mcp: TestMcp;
beforeAll(async () => {
  mcp = await startTestMcp({ logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) }) });
});
afterAll(async () => {
  await mcp?.close();
});

describe('when an agent calls a tool', () => {
  it('then one request line names the call by its requestId, with the organization, key, tool and status', async () => {
    const org = await createToolOrganization(mcp.db);
    const client = await connectClient(mcp.mcpUrl, org.key);
    try {
      const result = (await client.callTool({ name: 'service_get_company_profile', arguments: { taxId: '00000000000' } })) as CallToolResult;
      expect((result.structuredContent as any).error.code).toBe('not_found');
      const requestId = (result._meta as any).requestId as string;
      const logged = lines.filter((l) => l.msg === 'request' && l.requestId === requestId);
      expect(logged).toEqual([expect.objectContaining({
        level: 'info', method: 'POST', path: '/mcp', status: 200, organizationId: org.organizationId, keyId: org.keyId, rpc: ['tools/call service_get_company_profile'],
      })]);
      expect(typeof logged[0]!.ms).toBe('number');
    } finally {
      await client.close();
    }
    // The client's initialize was logged too, as every request is.
    expect(lines.some((l) => l.msg === 'request' && (l.rpc as string[] | undefined)?.includes('initialize'))).toBe(true);
  });

  it('then a tool name of 100 KB is logged cut short', async () => {
    const org = await createToolOrganization(mcp.db);
    const res = await fetch(mcp.mcpUrl, {
      method: 'POST',
      headers: { Authorization: `Bearer ${org.key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Protocol-Version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x'.repeat(100_000), arguments: {} } }),
    });
    await res.text();
    const [logged] = lines.filter((l) => l.requestId === res.headers.get('x-request-id'));
    expect((logged!.rpc as string[])[0]).toBe(`tools/call ${'x'.repeat(109)}`);
  });

  it('then a request with no key is logged with its status and no organization', async () => {
    const res = await fetch(mcp.mcpUrl, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(res.status).toBe(401);
    const requestId = res.headers.get('x-request-id');
    const logged = lines.filter((l) => l.requestId === requestId);
    expect(logged).toEqual([expect.objectContaining({ msg: 'request', status: 401 })]);
    expect(logged[0]).not.toHaveProperty('organizationId');
  });
});

describe('when a tool call or a request fails with one of our error codes', () => {
  const headers = (key?: string) => ({ ...(key && { Authorization: `Bearer ${key}` }), 'Mcp-Protocol-Version': '2025-06-18' });
  const callOf = (id: number, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });
  const lineOf = (res: Response) => {
    const logged = lines.filter((l) => l.msg === 'request' && l.requestId === res.headers.get('x-request-id'));
    expect(logged).toHaveLength(1);
    return logged[0]!;
  };

  it('then its request line carries the errorCode, as the API\'s do: for a failed tool result in a 200, a JSON-RPC error and an HTTP refusal alike, and none for a success', async () => {
    const org = await createToolOrganization(mcp.db, { tools: ['service_search_companies', 'service_get_company_profile'] });
    const cases: [string, Response, number, string | undefined][] = [
      ['not_found result', await rpc(mcp.mcpUrl, callOf(1, 'service_get_company_profile', { taxId: '00000000000' }), headers(org.key)), 200, 'not_found'],
      ['invalid arguments', await rpc(mcp.mcpUrl, callOf(1, 'service_search_companies', { limit: 500 }), headers(org.key)), 200, 'invalid_params'],
      ['tool not in the plan', await rpc(mcp.mcpUrl, callOf(1, 'service_analyze_company', { fiscalCode: '00000000000' }), headers(org.key)), 200, 'not_entitled'],
      ['person-only tool', await rpc(mcp.mcpUrl, callOf(1, 'service_get_usage', {}), headers(org.key)), 200, 'not_entitled'],
      ['unknown tool (JSON-RPC error)', await rpc(mcp.mcpUrl, callOf(1, 'service_no_such_tool', {}), headers(org.key)), 200, 'unknown_endpoint'],
      ['unknown method (JSON-RPC error)', await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 1, method: 'resources/list' }, headers(org.key)), 200, 'unknown_endpoint'],
      ['no key', await rpc(mcp.mcpUrl, callOf(1, 'service_search_companies', { query: 'rossi' }), headers()), 401, 'missing_api_key'],
      ['unparsable body', await fetch(mcp.mcpUrl, { method: 'POST', headers: { ...headers(org.key), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: '{' }), 400, 'invalid_params'],
      ['success', await rpc(mcp.mcpUrl, callOf(1, 'service_search_companies', { query: 'rossi' }), headers(org.key)), 200, undefined],
      // A batch: the first failed answer's code, whatever came before it.
      ['batch', await rpc(mcp.mcpUrl, [callOf(1, 'service_search_companies', { query: 'rossi' }), callOf(2, 'service_get_company_profile', { taxId: '00000000000' }), callOf(3, 'service_get_usage', {})], headers(org.key)), 200, 'not_found'],
    ];
    for (const [what, res, status, errorCode] of cases) {
      await res.text();
      expect(res.status, what).toBe(status);
      const line = lineOf(res);
      if (errorCode === undefined) expect(line, what).not.toHaveProperty('errorCode');
      else expect(line, what).toMatchObject({ errorCode });
    }
  });
});

describe('when a batch hands its tool calls ids of their own', () => {
  it('then its request line lists every requestId its answers carry, the header\'s first, and a lone call\'s line lists none', async () => {
    const org = await createToolOrganization(mcp.db);
    const headers = { Authorization: `Bearer ${org.key}`, 'Mcp-Protocol-Version': '2025-06-18' };
    const profile = (id: number, taxId: string) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'service_get_company_profile', arguments: { taxId } } });
    const res = await rpc(mcp.mcpUrl, [profile(1, '99999999999'), profile(2, '99999999998')], headers);
    const answers = (await res.json()) as { result: CallToolResult }[];
    const ids = answers.map((a) => (a.result._meta as { requestId: string }).requestId);
    expect(new Set(ids).size).toBe(2);
    const header = res.headers.get('x-request-id');
    expect(ids).toContain(header);
    const [line] = lines.filter((l) => l.msg === 'request' && l.requestId === header);
    expect(line!.requestIds).toEqual([header, ...ids.filter((id) => id !== header)]);

    const lone = await rpc(mcp.mcpUrl, profile(3, '99999999997'), headers);
    await lone.text();
    const [loneLine] = lines.filter((l) => l.msg === 'request' && l.requestId === lone.headers.get('x-request-id'));
    expect(loneLine).not.toHaveProperty('requestIds');
  });
});

describe('when a request carries an X-Request-Id', () => {
  const given = 'req_0123abcd-4567-89ab-cdef-0123456789ae';

  it('then a tool server that trusts the gateway (TRUST_GATEWAY_REQUEST_ID) names the request by it, and one that does not (the default) by its own', async () => {
    const org = await createToolOrganization(mcp.db);
    const trusting = await startTestMcp({ trustGatewayRequestId: true });
    try {
      const trusted = await rpc(trusting.mcpUrl, initializeRequest(), { Authorization: `Bearer ${org.key}`, 'X-Request-Id': given });
      expect(trusted.status).toBe(200);
      expect(trusted.headers.get('x-request-id')).toBe(given);
      const malformed = await rpc(trusting.mcpUrl, initializeRequest(), { Authorization: `Bearer ${org.key}`, 'X-Request-Id': given.toUpperCase() });
      expect(malformed.headers.get('x-request-id')).toMatch(/^req_[0-9a-f-]{36}$/);
      expect(malformed.headers.get('x-request-id')).not.toBe(given);
    } finally {
      await trusting.close();
    }
    const ignored = await rpc(mcp.mcpUrl, initializeRequest(), { Authorization: `Bearer ${org.key}`, 'X-Request-Id': given });
    expect(ignored.status).toBe(200);
    expect(ignored.headers.get('x-request-id')).toMatch(/^req_[0-9a-f-]{36}$/);
    expect(ignored.headers.get('x-request-id')).not.toBe(given);
    expect(lines.some((l) => l.msg === 'request' && l.requestId === given)).toBe(false);
  });
});
