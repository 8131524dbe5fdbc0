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
