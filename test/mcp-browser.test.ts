import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumArgs, chromiumPath } from './dashboard-fixtures.js';
import { createToolOrganization, initializeRequest, startTestMcp, type TestMcp, type ToolOrganization } from './mcp-fixtures.js';

// The tool server called from a page of another origin, as a browser-based client (MCP
// Inspector in direct mode) calls it: every request goes through CORS.

const haveBrowser = existsSync(chromiumPath);
let mcp: TestMcp;
let org: ToolOrganization;
let browser: Browser;
let page: Page;
let site: http.Server;

describe.skipIf(!haveBrowser)('the tool server from a page of another origin', () => {
  beforeAll(async () => {
    mcp = await startTestMcp();
    org = await createToolOrganization(mcp.db);
    // Another port is another origin.
    site = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>client</title>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${(site.address() as AddressInfo).port}/`);
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => site?.close(resolve));
    await mcp?.close();
  });

  // What the SDK client sends: initialize, then its GET probe for an event stream, whose 405 it
  // takes as "no stream" (a request the browser refuses would be an error instead).
  it('when a page posts initialize and probes with GET then it reads both answers, the 405 naming the methods the preflight allows', async () => {
    const answers = await page.evaluate(async ({ url, key, body }) => {
      const headers = { Authorization: `Bearer ${key}`, 'Mcp-Protocol-Version': '2025-06-18' };
      const init = await fetch(url, { method: 'POST', headers: { ...headers, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
      const probe = await fetch(url, { method: 'GET', headers: { ...headers, Accept: 'text/event-stream' } });
      return {
        init: { status: init.status, name: ((await init.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name, requestId: init.headers.get('x-request-id') !== null },
        probe: { status: probe.status, code: ((await probe.json()) as { error: { data: { code: string } } }).error.data.code },
      };
    }, { url: mcp.mcpUrl, key: org.key, body: initializeRequest() });
    expect(answers).toEqual({ init: { status: 200, name: 'italian-company-data', requestId: true }, probe: { status: 405, code: 'unknown_endpoint' } });
    // Neither header is exposed to the page's scripts: read as the browser reads them.
    const preflight = await fetch(mcp.mcpUrl, { method: 'OPTIONS', headers: { Origin: 'http://example.test', 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' } });
    const probe = await fetch(mcp.mcpUrl, { headers: { Authorization: `Bearer ${org.key}` } });
    expect(probe.status).toBe(405);
    expect([preflight.headers.get('access-control-allow-methods'), probe.headers.get('allow')]).toEqual(['POST, OPTIONS', 'POST, OPTIONS']);
  });
});
