import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestOrganization, ensureExampleCompany, exampleCompanyCode, startTestApi, type TestOrganization } from './api-fixtures.js';
import { ledgerCount } from './billing-fixtures.js';
import { killChildren } from './support/child-processes.js';
import { testDb } from './support/database.js';
import { NGINX, startGateway } from './support/gateway.js';
import { serviceEntries, startServiceProcess, type RunningService } from './support/service-processes.js';
import { applyBusEventsOf, eventsOnBus } from './support/usage-bus.js';

// Two API replicas behind the gateway (deploy/nginx.conf), as docker-compose.yml runs them:
// real processes on one Postgres usage bus, trusting the gateway's request id
// (TRUST_GATEWAY_REQUEST_ID). A replica that stops or drops a call has it sent to the other,
// under the same request id, so the client gets no 5xx and the call is charged once.

const REQUEST_ID = /^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const db = testDb();
let dir: string;
const running: ChildProcess[] = [];
let org: TestOrganization;

beforeAll(async () => {
  if (!existsSync(NGINX)) throw new Error(`${NGINX} is missing: the gateway tests run Debian's nginx (apt-get install nginx; .ci/run installs it)`);
  await ensureExampleCompany(db);
  org = await createTestOrganization(db);
  dir = await mkdtemp(path.join(os.tmpdir(), 'gateway-retries-'));
});
afterAll(async () => {
  for (const child of running) if (child.exitCode === null && child.signalCode === null && child.spawnfile.endsWith('nginx')) child.kill('SIGQUIT');
  await killChildren(running);
  await db.destroy();
  if (dir) await rm(dir, { recursive: true, force: true });
});

function startReplica(trust = true): Promise<RunningService> {
  return startServiceProcess(serviceEntries.api, { DATABASE_URL: inject('databaseUrl'), KAFKA_BROKERS: '', MIGRATE_ON_START: 'false', DATA_DIR: dir, TRUST_GATEWAY_REQUEST_ID: String(trust) }, running);
}

const report = (base: string, headers: Record<string, string> = {}, key = org.key) => fetch(`${base}/companies/${exampleCompanyCode}/report`, { headers: { Authorization: `Bearer ${key}`, ...headers } });

/**
 * A replica that passes a company call to the replica behind it, lets that answer (its usage
 * event published) and drops the answer; anything else (the gateway's readiness probe) it passes
 * both ways. nginx then counts it failed for fail_timeout (10 s): one call in a run is dropped.
 */
async function answerDropper(replica: string): Promise<{ address: string; dropped: () => number; close: () => void }> {
  let dropped = 0;
  const [host, port] = replica.split(':');
  const server = net.createServer((client) => {
    const upstream = net.connect({ host, port: Number(port) });
    client.pipe(upstream);
    client.once('data', (request: Buffer) => {
      if (!request.toString('latin1').startsWith('GET /companies/')) return void upstream.pipe(client);
      upstream.once('data', () => {
        dropped++;
        upstream.destroy();
        client.destroy();
      });
    });
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { address: `127.0.0.1:${(server.address() as AddressInfo).port}`, dropped: () => dropped, close: () => server.close() };
}

describe('two API replicas behind the gateway', () => {
  it('when a replica answers a call and the answer is lost, then the gateway sends it to the other replica and the call is charged once, under the id the client got', async () => {
    const [first, second] = await Promise.all([startReplica(), startReplica()]);
    const dropper = await answerDropper(new URL(first.baseUrl).host);
    try {
      const gateway = await startGateway({ dir, apiUpstreams: [dropper.address, new URL(second.baseUrl).host] }, running);
      const { organizationId, key } = await createTestOrganization(db);
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) {
        const res = await report(gateway.url, {}, key);
        expect(res.status).toBe(200);
        const id = ((await res.json()) as { meta: { requestId: string } }).meta.requestId;
        expect(res.headers.get('x-request-id')).toBe(id);
        ids.push(id);
      }
      // Round robin: some calls went to the dropping replica first, were published there, then answered by the other.
      const dropped = dropper.dropped();
      expect(dropped).toBeGreaterThan(0);
      // Published twice, by each replica, under one id.
      const onBus = (await eventsOnBus(db, { organizationId })).map((e) => e.eventId as string);
      expect(onBus.length).toBe(ids.length + dropped);
      expect(new Set(onBus)).toEqual(new Set(ids));
      await applyBusEventsOf(db, organizationId);
      expect(await ledgerCount(db, organizationId)).toBe(ids.length);
    } finally {
      dropper.close();
    }
  });

  it('when replicas are stopped (one by SIGTERM, another by SIGKILL) under a loop of calls, then no client gets a 5xx', async () => {
    const [first, second, third] = await Promise.all([startReplica(), startReplica(), startReplica()]);
    const gateway = await startGateway({ dir, apiUpstreams: [first, second, third].map((r) => new URL(r.baseUrl).host) }, running);
    const statuses: number[] = [];
    let stop = false;
    const loop = async () => {
      while (!stop) statuses.push((await report(gateway.url).then(async (res) => (await res.arrayBuffer(), res))).status);
    };
    const loops = [loop(), loop(), loop()];
    await new Promise((resolve) => setTimeout(resolve, 300));
    first.child.kill('SIGTERM');
    await new Promise((resolve) => first.child.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    second.child.kill('SIGKILL');
    await new Promise((resolve) => second.child.once('exit', resolve));
    await new Promise((resolve) => setTimeout(resolve, 300));
    stop = true;
    await Promise.all(loops);
    expect(statuses.length).toBeGreaterThan(10);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  });
});

describe('the request id a replica takes from X-Request-Id', () => {
  it('when it trusts the gateway, then a well-formed id is the call\'s (body, header, usage event); a malformed one is replaced by a fresh id', async () => {
    const api = await startTestApi({ trustGatewayRequestId: true });
    try {
      const given = 'req_0123abcd-4567-89ab-cdef-0123456789ab';
      const res = await report(api.url, { 'X-Request-Id': given });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { meta: { requestId: string } }).meta.requestId).toBe(given);
      expect(res.headers.get('x-request-id')).toBe(given);
      expect(await eventsOnBus(db, { eventId: given })).toHaveLength(1);
      for (const malformed of ['req_0123ABCD-4567-89AB-CDEF-0123456789AB', `${given}0`, 'req_0123abcd456789abcdef0123456789ab', given.slice(0, -1), `${given}, ${given}`]) {
        const other = await report(api.url, { 'X-Request-Id': malformed });
        const id = ((await other.json()) as { meta: { requestId: string } }).meta.requestId;
        expect(id).toMatch(REQUEST_ID);
        expect(id).not.toBe(given);
      }
    } finally {
      await api.close();
    }
  });

  it('when it does not trust the gateway (the default), then a client\'s X-Request-Id is ignored', async () => {
    const api = await startTestApi();
    try {
      const given = 'req_0123abcd-4567-89ab-cdef-0123456789ac';
      const res = await report(api.url, { 'X-Request-Id': given });
      const id = ((await res.json()) as { meta: { requestId: string } }).meta.requestId;
      expect(id).toMatch(REQUEST_ID);
      expect(id).not.toBe(given);
    } finally {
      await api.close();
    }
  });

  it('when a client sends an X-Request-Id through the gateway, then the replica never sees it: the gateway\'s own replaces it', async () => {
    const replica = await startReplica();
    const gateway = await startGateway({ dir, apiUpstreams: [new URL(replica.baseUrl).host] }, running);
    const given = 'req_0123abcd-4567-89ab-cdef-0123456789ad';
    const res = await report(gateway.url, { 'X-Request-Id': given });
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { meta: { requestId: string } }).meta.requestId;
    expect(id).toMatch(REQUEST_ID);
    expect(id).not.toBe(given);
    for (let i = 0; i < 50 && !(await gateway.accessLog()).includes(id); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await gateway.accessLog()).toContain(id);
  });
});
