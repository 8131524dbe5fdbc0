import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requestIdSchema } from '../core/errors/index.js';
import { createToolOrganization, json, rpc, startTestMcp, type TestMcp, type ToolOrganization } from './mcp-fixtures.js';

// What the tool server reads of a POST before anything runs. JSON.parse of a deeply nested
// body blocked the whole process (the API too, under `npm start`) for a quarter of a second and
// more per request, for any valid key: such a body is now refused before it is parsed, and a
// body is read up to what MCP traffic needs, not a megabyte.

let mcp: TestMcp;
// The old body limit, so that its bodies are as deep as they could be before; only the nesting
// check keeps them from JSON.parse here.
let megabyte: TestMcp;
let org: ToolOrganization;

beforeAll(async () => {
  [mcp, megabyte] = await Promise.all([startTestMcp(), startTestMcp({ maxBodyBytes: 1_000_000 })]);
  org = await createToolOrganization(mcp.db);
});
afterAll(async () => {
  await Promise.all([mcp?.close(), megabyte?.close()]);
});

const auth = (key: string) => ({ Authorization: `Bearer ${key}` });
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
/** A tools/list whose params hold `x`, nested `levels` deep: the body is two levels deeper. */
const toolsListWith = (x: string) => `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":${x}}}`;
const post = (url: string, key: string, body: string) => fetch(url, {
  method: 'POST',
  headers: { ...auth(key), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
  body,
});

describe('a body nested too deep', () => {
  it('when a body nests arrays more than 64 levels deep then it is refused unparsed: 400, -32600, data.code invalid_params, the limit in the message, and counted like any malformed request', async () => {
    const body = toolsListWith(nested(120_000));
    expect(Buffer.byteLength(body)).toBeLessThan(256 * 1024);
    const res = await post(mcp.mcpUrl, org.key, body);
    expect(res.status).toBe(400);
    const answer = await json(res);
    expect(answer).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, data: { code: 'invalid_params', requestId: res.headers.get('x-request-id') } } });
    expect(answer.error.message).toMatch(/more than 64 levels deep/);
    expect(requestIdSchema.safeParse(answer.error.data.requestId).success).toBe(true);
    expect(res.headers.get('ratelimit-limit')).not.toBeNull();
  });

  it('when a body is exactly 64 levels deep, or its strings hold brackets and escaped quotes, then it is answered as before', async () => {
    const deepest = await post(mcp.mcpUrl, org.key, toolsListWith(nested(62)));
    expect(deepest.status).toBe(200);
    expect((await json(deepest)).result.tools.length).toBeGreaterThan(0);
    const oneMore = await post(mcp.mcpUrl, org.key, toolsListWith(nested(63)));
    expect(oneMore.status).toBe(400);

    // 70 brackets in a string after an escaped quote, and 70 more in the next string, after one
    // that ends in an escaped backslash: a tools/call whose arguments are then judged as ever.
    const query = `\\"${'['.repeat(70)} \\\\`;
    const body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"service_search_companies","arguments":{"query":"${query}","municipality":"${'{'.repeat(70)}","limit":1}}}`;
    expect(JSON.parse(body).params.arguments.query).toBe(`"${'['.repeat(70)} \\`);
    const res = await post(mcp.mcpUrl, org.key, body);
    expect(res.status).toBe(200);
    const answer = await json(res);
    expect(answer.id).toBe(2);
    // Read as sent: the municipality, 70 braces, is no comune, and the answer says so of it.
    expect(answer.result.structuredContent.error.details).toEqual([{ path: 'municipality', message: expect.stringMatching(new RegExp(`^no comune is named "\\{{70}"`)) }]);
  });

  it('when 10 bodies each nested half a million levels deep (about 1 MB) are in flight then each is refused, and another organization\'s request meanwhile is answered promptly', async () => {
    const other = await createToolOrganization(megabyte.db);
    const normal = () => rpc(megabyte.mcpUrl, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, auth(other.key));
    // The first answer warms the key and plan caches, so the timed ones measure only waiting.
    expect((await normal()).status).toBe(200);
    /** Sends 10 bodies and, once they have arrived, the other organization's request: what each got, and how long they took. */
    const flood = async (body: string) => {
      const began = Date.now();
      const sent = Array.from({ length: 10 }, async () => {
        const res = await post(megabyte.mcpUrl, org.key, body);
        return `${res.status} ${(await json(res)).error?.code}`;
      });
      await new Promise((resolve) => setTimeout(resolve, 100));
      const asked = Date.now();
      const res = await normal();
      const normalMs = Date.now() - asked;
      const normalAnswer = `${res.status} ${(await json(res)).result?.tools.length > 0}`;
      const answers = await Promise.all(sent);
      return { answers, normalAnswer, normalMs, allMs: Date.now() - began };
    };
    const deep = toolsListWith(nested(499_000));
    const flat = toolsListWith(JSON.stringify('x'.repeat(nested(499_000).length - 2)));
    expect(Buffer.byteLength(deep)).toBeLessThan(1_000_000);
    expect(Buffer.byteLength(flat)).toBe(Buffer.byteLength(deep));

    // The same bytes, flat, read and parsed whole: the measure of this machine at this moment.
    const reference = await flood(flat);
    expect(reference.answers).toEqual(Array(10).fill('200 undefined'));
    const attack = await flood(deep);
    expect(attack.answers).toEqual(Array(10).fill('400 -32600'));
    expect(attack.normalAnswer).toBe('200 true');
    // Before, JSON.parse held the process 0.2 to 1.4 s per body, depending on the machine: on a
    // 2-core machine at a load average of 10, the 10 took 4.8 s against 0.7 s flat, and the
    // other request 2.4 s, its plan read past its deadline (503). Now 0.3 s and 60 ms there:
    // the margins are generous.
    expect(attack.allMs).toBeLessThan(2 * reference.allMs + 500);
    expect(attack.normalMs).toBeLessThan(1_000);
  });
});

describe('the body limit', () => {
  it('when a body is larger than 256 KiB then it is refused unread: 413, -32000, data.code invalid_params, the limit in the message', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: { _meta: { pad: 'x'.repeat(256 * 1024) } } });
    const res = await post(mcp.mcpUrl, org.key, body);
    expect(res.status).toBe(413);
    expect(await json(res)).toMatchObject({ id: null, error: { code: -32000, message: 'Request body larger than 262144 bytes.', data: { code: 'invalid_params' } } });
  });

  it('when a batch carries 20 calls with the largest arguments the tools take (about 75 KB) then it is answered, one result per call', async () => {
    const slugs = Array.from({ length: 80 }, (_, i) => `interest_and_other_financial_charges_${i}`);
    const categories = ['balance_sheet', 'income_statement', 'assets', 'liabilities', 'equity', 'revenue', 'costs', 'profitability', 'liquidity', 'solvency', 'efficiency', 'ratio'];
    const years = Array.from({ length: 10 }, (_, i) => 2015 + i);
    const batch = Array.from({ length: 20 }, (_, id) => ({
      jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'service_get_company_metrics', arguments: { fiscalCode: 'LMBDNC79E13H199R', slugs, categories, years, includeForecasts: true } },
    }));
    expect(JSON.stringify(batch).length).toBeGreaterThan(70_000);
    const res = await rpc(mcp.mcpUrl, batch, auth(org.key));
    expect(res.status).toBe(200);
    const answers = await json(res);
    expect(answers.map((a: { id: number }) => a.id)).toEqual(batch.map((m) => m.id));
    expect(answers.every((a: { result?: { isError?: boolean } }) => a.result?.isError === true)).toBe(true);
  });

  it('when a body is just under 256 KiB then it is read and answered as before', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list', params: { _meta: { pad: 'x'.repeat(250 * 1024) } } });
    const res = await post(mcp.mcpUrl, org.key, body);
    expect(res.status).toBe(200);
    expect((await json(res)).result.tools.length).toBeGreaterThan(0);
  });
});
