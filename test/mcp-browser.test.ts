import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumArgs, chromiumPath } from './dashboard-fixtures.js';
import { createToolOrganization, initializeRequest, startTestMcp, type TestMcp, type ToolOrganization } from './mcp-fixtures.js';

// The tool server called from a page of another origin, as a browser-based client (MCP
// Inspector in direct mode, at http://localhost:6274) calls it: every request goes through CORS,
// and the page's origin, a loopback one, is among those the Origin check lets through. Then a
// page of a site whose name is made to resolve to the server's address (DNS rebinding), which
// the check refuses.

const haveBrowser = existsSync(chromiumPath);
let mcp: TestMcp;
let org: ToolOrganization;
let browser: Browser;
let page: Page;
let site: http.Server;
let siteOrigin: string;

describe.skipIf(!haveBrowser)('the tool server from a page of another origin', () => {
  beforeAll(async () => {
    mcp = await startTestMcp();
    org = await createToolOrganization(mcp.db);
    // Another port is another origin.
    site = http.createServer((_req, res) => res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>client</title>'));
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    // What a rebinding attacker's DNS answers once the page is loaded: its name, our address.
    // Chromium's own Local Network Access check would block the rebound page's calls anyway (a
    // page it took for public calling loopback); it is off here, as it is in other browsers, so
    // that what refuses them is the server's Origin check.
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [...chromiumArgs, '--host-resolver-rules=MAP rebound.test 127.0.0.1', '--disable-features=LocalNetworkAccessChecks'],
    });
    page = await browser.newPage();
    await page.goto(`${siteOrigin}/`);
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
    const preflight = await fetch(mcp.mcpUrl, { method: 'OPTIONS', headers: { Origin: siteOrigin, 'Access-Control-Request-Method': 'GET', 'Access-Control-Request-Headers': 'authorization' } });
    const probe = await fetch(mcp.mcpUrl, { headers: { Authorization: `Bearer ${org.key}` } });
    expect(probe.status).toBe(405);
    expect([preflight.headers.get('access-control-allow-methods'), probe.headers.get('allow')]).toEqual(['POST, OPTIONS', 'POST, OPTIONS']);
  });

  it('when a page of a rebound name posts to the tool server as its own origin then it is refused 403 before the key is looked at', async () => {
    const rebound = await browser.newPage();
    try {
      // The attacker's page, as first served from the attacker's address, at the name and port
      // that now lead to the tool server: its requests to /mcp are same-origin, so no preflight.
      const origin = `http://rebound.test:${new URL(mcp.url).port}`;
      await rebound.route(`${origin}/`, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>rebound</title>' }));
      await rebound.goto(`${origin}/`);
      const answers = await rebound.evaluate(async ({ key, body }) => {
        const post = await fetch('/mcp', { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }, body: JSON.stringify(body) });
        const probe = await fetch('/mcp', { method: 'GET', headers: { Accept: 'text/event-stream' } });
        const read = async (res: Response) => {
          const body = (await res.json()) as { error: { code: string; data?: { code: string } } };
          return { status: res.status, code: body.error.data?.code ?? body.error.code };
        };
        return [await read(post), await read(probe)];
      }, { key: org.key, body: initializeRequest() });
      // A browser sends no Origin with a same-origin GET: that one meets the key check, which a
      // rebound page has no key for, and GET does nothing on this server anyway (405).
      expect(answers).toEqual([{ status: 403, code: 'invalid_params' }, { status: 401, code: 'missing_api_key' }]);
    } finally {
      await rebound.close();
    }
  });
});
