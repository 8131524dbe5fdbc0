import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardForFile } from './dashboard-fixtures.js';
import { createToolOrganization, startTestMcp, type TestMcp } from './mcp-fixtures.js';

// A body refused part-read (413) must not leave its unread rest in front of the client's next
// request on the same keep-alive connection. Before, the dashboard's 413 page said
// `Connection: keep-alive` and the next click on that connection got no answer until the
// keep-alive timeout reset it, 65 s later; the tool server's 413 did the same.
const env = dashboardForFile();
let mcp: TestMcp;
beforeAll(async () => {
  mcp = await startTestMcp();
});
afterAll(async () => {
  await mcp?.close();
});

/**
 * Writes `requests` on one connection, as a keep-alive client does, and reads until the server
 * ends it (or `giveUpMs` pass): what came back, and whether the server ended the connection.
 */
function onOneConnection(url: string, requests: string[], giveUpMs = 5_000): Promise<{ text: string; ended: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ text, ended: false });
    }, giveUpMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {}); // a reset after the answer is an ending too
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ended: true });
    });
    socket.on('connect', () => {
      for (const request of requests) socket.write(request);
    });
    socket.once('error', reject);
  });
}

const post = (host: string, path: string, contentType: string, body: string, extra = '') =>
  `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${contentType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: keep-alive\r\n${extra}\r\n${body}`;
const get = (host: string, path: string) => `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: keep-alive\r\n\r\n`;

describe('a request body refused as too large', () => {
  it('when the dashboard refuses a form too large then its 413 closes the connection at once, so the next request is not left hanging', async () => {
    const host = new URL(env.dashboard.url).host;
    const began = Date.now();
    const { text, ended } = await onOneConnection(env.dashboard.url, [post(host, '/sign-in', 'application/x-www-form-urlencoded', `email=${'x'.repeat(3 * 1024 * 1024)}`), get(host, '/sign-in')]);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(ended).toBe(true);
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('when the tool server refuses a body too large then its 413 closes the connection at once', async () => {
    const host = new URL(mcp.url).host;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    const { key } = await createToolOrganization(mcp.db);
    const headers = `Authorization: Bearer ${key}\r\nAccept: application/json, text/event-stream\r\n`;
    const { text, ended } = await onOneConnection(mcp.url, [post(host, '/mcp', 'application/json', body, headers), get(host, '/healthz')]);
    expect(text).toMatch(/^HTTP\/1\.1 413 /);
    expect(text).toMatch(/\r\nConnection: close\r\n/i);
    expect(ended).toBe(true);
  });
});
