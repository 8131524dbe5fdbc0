import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorCatalogue, errorEnvelopeSchema } from '../core/errors/index.js';
import { startGateway as startNginxGateway, NGINX } from './support/gateway.js';
import { freePort } from './services/free-port.js';
import { createTestOrganization, ensureExampleCompany, exampleCompanyCode, startTestApi, type TestApi } from './api-fixtures.js';

// The gateway of docker-compose.yml (deploy/nginx.conf), run with Debian's nginx in front of a
// real API (test/support/gateway.ts): what a client of the scaled deployment meets when no
// replica answers, or nginx cannot pass a call on, is tested here.

let api: TestApi;
let key: string;
let dir: string;
const gateways: ChildProcess[] = [];
// Each gateway's access log file, by its API address.
const accessLogs = new Map<string, () => Promise<string>>();

beforeAll(async () => {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: the gateway tests run Debian's nginx (apt-get install nginx; .ci/run installs it)`);
  api = await startTestApi();
  await ensureExampleCompany(api.db);
  key = (await createTestOrganization(api.db)).key;
  dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-'));
});
afterAll(async () => {
  for (const gateway of gateways) gateway.kill('SIGQUIT');
  await api?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The gateway in front of one replica (`apiUpstream`), its access log kept by its address. */
async function startGateway(apiUpstream: string, options: { readTimeoutS?: number; workerConnections?: number } = {}): Promise<string> {
  const gateway = await startNginxGateway({ dir, apiUpstreams: [apiUpstream], ...options }, gateways);
  accessLogs.set(gateway.url, gateway.accessLog);
  return gateway.url;
}

/** The answer must be our envelope (internal_error unless said), its request id also in X-Request-Id. */
async function expectGatewayError(res: Response, expected: { status: number; code: string; message: string; details?: unknown } = { status: 500, code: 'internal_error', message: errorCatalogue.internal_error.message }): Promise<string> {
  expect(res.status).toBe(expected.status);
  expect(res.headers.get('content-type')).toBe('application/json');
  const body = errorEnvelopeSchema.parse(await res.json());
  expect(body.error).toEqual({ code: expected.code, message: expected.message, requestId: expect.stringMatching(/^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/), ...(expected.details ? { details: expected.details } : {}) });
  expect(res.headers.get('x-request-id')).toBe(body.error.requestId);
  return body.error.requestId;
}

describe('the gateway (deploy/nginx.conf)', () => {
  it('when a replica answers, then its answer passes unchanged, errors of ours included', async () => {
    const gateway = await startGateway(new URL(api.url).host);
    const ok = await fetch(`${gateway}/companies/${exampleCompanyCode}/report`, { headers: { Authorization: `Bearer ${key}` } });
    expect(ok.status).toBe(200);
    expect(((await ok.json()) as { meta: { endpoint: string } }).meta.endpoint).toBe('company-report');
    const refused = await fetch(`${gateway}/companies/${exampleCompanyCode}/report`);
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('missing_api_key');
  });

  it('when a client puts its key in the URL then the gateway\'s access log keeps the path without it, and no answer names nginx\'s version', async () => {
    const gateway = await startGateway(new URL(api.url).host);
    const res = await fetch(`${gateway}/companies/${exampleCompanyCode}/report?api_key=${key}`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(401);
    expect(res.headers.get('server')).toBe('nginx');
    // Pasted in place of the company's code: the log names the key's mode only.
    expect((await fetch(`${gateway}/companies/${key}/profile`, { headers: { Authorization: `Bearer ${key}` } })).status).toBe(401);
    const gone = await fetch(`${gateway}/nowhere`, { method: 'DELETE' });
    expect(gone.headers.get('server')).toBe('nginx');
    for (let i = 0; i < 50 && !(await accessLogs.get(gateway)!()).includes(`/companies/${exampleCompanyCode}/report`); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    const log = await accessLogs.get(gateway)!();
    expect(log).toContain(`"GET /companies/${exampleCompanyCode}/report HTTP/1.1" 401`);
    expect(log).not.toContain(key);
    expect(log).not.toContain(key.slice(8));
    expect(log).toContain(`"GET /companies/sk_${key.slice(3, 7)}_[redacted]/profile HTTP/1.1" 401`);
    expect(log).not.toContain('api_key');
  });

  it('when no replica can be reached, then the client gets internal_error in our envelope, not nginx\'s HTML page, each time with a request id of its own', async () => {
    const gateway = await startGateway(`127.0.0.1:${await freePort()}`);
    const ids = [];
    for (let i = 0; i < 2; i++) ids.push(await expectGatewayError(await fetch(`${gateway}/companies/${exampleCompanyCode}/report`, { headers: { Authorization: `Bearer ${key}` } })));
    expect(new Set(ids).size).toBe(2);
  });

  it('when a replica answers with an error of its own, a 502 or 504, then it passes unchanged, not as the gateway\'s', async () => {
    const own = { error: { code: 'upstream_timeout', message: 'The company data store did not answer in time. Retry later.', requestId: 'req_00000000-0000-4000-8000-000000000000' } };
    const replica = http.createServer((_req, res) => {
      res.writeHead(504, { 'Content-Type': 'application/json; charset=utf-8', 'X-Request-Id': own.error.requestId });
      res.end(JSON.stringify(own));
    });
    await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
    try {
      const gateway = await startGateway(`127.0.0.1:${(replica.address() as AddressInfo).port}`);
      const res = await fetch(`${gateway}/companies/${exampleCompanyCode}/financials`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).toBe(504);
      expect(await res.json()).toEqual(own);
      expect(res.headers.get('x-request-id')).toBe(own.error.requestId);
    } finally {
      replica.close();
    }
  });

  it('when nginx refuses a request itself (a header over 16 KB) then the client gets invalid_params in our envelope; a 12 KB URL still reaches the replica', async () => {
    const gateway = await startGateway(new URL(api.url).host);
    await expectGatewayError(await fetch(`${gateway}/companies/${exampleCompanyCode}/report`, { headers: { Authorization: `Bearer ${key}`, 'X-Padding': 'x'.repeat(20_000) } }), {
      status: 422, code: 'invalid_params', message: 'The request line and headers are too large: at most 16 KB.', details: [{ path: 'headers', message: 'the request line and headers together at most 16 KB' }],
    });
    const long = await fetch(`${gateway}/companies/${'A'.repeat(12_000)}/profile`, { headers: { Authorization: `Bearer ${key}` } });
    expect(long.status).toBe(404);
    expect(((await long.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('when a replica takes the request and never answers, then at proxy_read_timeout the client gets the same envelope', async () => {
    const silent = net.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const gateway = await startGateway(`127.0.0.1:${(silent.address() as AddressInfo).port}`, { readTimeoutS: 1 });
      await expectGatewayError(await fetch(`${gateway}/companies/${exampleCompanyCode}/financials`, { headers: { Authorization: `Bearer ${key}` } }));
    } finally {
      silent.close();
      // The held sockets: nginx closed its side at the timeout.
    }
  });

  it('when nginx runs out of worker_connections for the replica\'s side of a call, then the client gets internal_error in our envelope, not nginx\'s HTML 500 page', async () => {
    // Three: the two listening sockets and the client's connection, none left for the replica's.
    const gateway = await startGateway(new URL(api.url).host, { workerConnections: 3 });
    const id = await expectGatewayError(await fetch(`${gateway}/companies/${exampleCompanyCode}/report`, { headers: { Authorization: `Bearer ${key}` } }));
    // The access log names the call by the id the client got.
    for (let i = 0; i < 50 && !(await accessLogs.get(gateway)!()).includes(id); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await accessLogs.get(gateway)!()).toContain(`" 500 `);
    expect(await accessLogs.get(gateway)!()).toMatch(new RegExp(`" 500 \\d+ [0-9.]+ "[^"]*" ${id}\n`));
  });

  it('when a replica answers, then the gateway\'s access log names the call by the request id of its answer (req_ + UUID), as the replica\'s own log does', async () => {
    const gateway = await startGateway(new URL(api.url).host);
    const res = await fetch(`${gateway}/companies/${exampleCompanyCode}/report`, { headers: { Authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-request-id')!;
    expect(((await res.json()) as { meta: { requestId: string } }).meta.requestId).toBe(id);
    for (let i = 0; i < 50 && !(await accessLogs.get(gateway)!()).includes(id); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await accessLogs.get(gateway)!()).toMatch(new RegExp(`"GET /companies/${exampleCompanyCode}/report HTTP/1.1" 200 \\d+ [0-9.]+ "[^"]*" ${id}\n`));
  });
});
