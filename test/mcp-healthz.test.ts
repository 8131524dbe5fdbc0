import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestMcp, type TestMcp } from './mcp-fixtures.js';

describe('tool server health check', () => {
  let mcp: TestMcp;
  beforeAll(async () => {
    mcp = await startTestMcp();
  });
  afterAll(async () => {
    await mcp?.close();
  });

  it('when GET /healthz is called without a key then it answers 200 ok', async () => {
    const response = await fetch(`${mcp.url}/healthz`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', rateLimitStore: 'in-process' });
  });

  it('when another path is called then it answers unknown_endpoint in the error envelope', async () => {
    const response = await fetch(`${mcp.url}/nope`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as { error: { code: string; requestId: string } };
    expect(body.error.code).toBe('unknown_endpoint');
    expect(body.error.requestId).toBe(response.headers.get('x-request-id'));
  });
});
