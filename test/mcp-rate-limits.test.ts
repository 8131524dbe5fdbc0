import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { upsertCompanies } from '../core/companies/write-companies.js';
import { createInMemoryRateLimiter } from '../core/ratelimit/index.js';
import { startTestApi, type TestApi } from './api-fixtures.js';
import { connectClient, createToolOrganization, sampleGroup, startTestMcp, type TestMcp } from './mcp-fixtures.js';

// The API and the tool server count one organization's calls against one set of limits. Here
// they are two apps with their own access control sharing one rate-limit store, as two
// processes share Redis in production.

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

describe('rate limits shared by API and tool server', () => {
  it('when an organization bursts across API and MCP then their calls together hit its one per-minute limit, on both sides', async () => {
    const group = sampleGroup();
    await upsertCompanies(mcp.db, [group.root]);
    // A per-minute cap of 10 and a generous bucket: exactly 10 calls pass within the minute.
    const org = await createToolOrganization(mcp.db, { endpoints: ['company-profile'], ratePerSecond: 100, burst: 100, ratePerMinute: 10 });
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
    expect((refused._meta as any).retryAfterSeconds).toBeGreaterThanOrEqual(1);
  });
});
