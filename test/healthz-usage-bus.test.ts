import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { killAndWait, readKafkaControl, startKafkaBroker, stopKafkaBroker, writeKafkaControl } from './services/kafka-control.js';
import { startLocalKafka } from './services/kafka-local.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { killChildren } from './support/child-processes.js';
import { serviceEntries, startServiceProcess, type ServiceEntry } from './support/service-processes.js';

// /healthz of the services that publish usage to Kafka, run alone as production runs them.
// Before, a process whose KAFKA_BROKERS named no broker answered 200 ok to every health check
// while refusing every paid call with 503: a rollout of a misconfigured replica went through.
// Empty when the run was started with TEST_SERVICES=postgres.
const kafkaBrokers = inject('kafkaBrokers');
// A broker of this file's own to stop and start (stopping the suite's would fail whatever Kafka
// test another worker runs meanwhile), from the jars the suite's local broker came from.
const ownBrokerPossible = (await readKafkaControl(inject('kafkaControlFile'))).kind === 'local';

const services = [serviceEntries.api, serviceEntries.mcp];

const running: ChildProcess[] = [];
let database: ScratchDatabase;

/** `service` alone on the scratch database. */
const startService = (service: ServiceEntry, env: Record<string, string>) => startServiceProcess(service, { DATABASE_URL: database.url, ...env }, running);

async function health(baseUrl: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}/healthz`);
  return { status: response.status, body: await response.json() };
}

/** Polls /healthz until it answers `status`; resolves with that answer, or the last one after `timeoutMs`. */
async function healthOnce(baseUrl: string, status: number, timeoutMs: number): Promise<{ status: number; body: unknown }> {
  const until = Date.now() + timeoutMs;
  let last = await health(baseUrl);
  while (last.status !== status && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await health(baseUrl);
  }
  return last;
}

beforeAll(async () => {
  database = await createScratchDatabase('healthz_bus');
});
afterEach(() => killChildren(running));
afterAll(async () => {
  await database?.drop();
});

describe('/healthz of a service publishing usage to Kafka', () => {
  it.each(services)('when KAFKA_BROKERS names no broker then $entry answers 503 naming the usage bus, the database ok', async (service) => {
    const { baseUrl } = await startService(service, { KAFKA_BROKERS: '127.0.0.1:1' });
    // Twice, a second apart: not a start-up moment but what it says as long as Kafka is gone.
    for (let i = 0; i < 2; i++) {
      expect(await health(baseUrl)).toEqual({ status: 503, body: { status: 'unavailable', checks: { database: 'ok', usageBus: 'unreachable' }, rateLimitStore: 'in-process' } });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  });

  it.skipIf(!kafkaBrokers).each(services)('when KAFKA_BROKERS names a broker that answers then $entry answers 200 ok once its producer is connected', async (service) => {
    const { baseUrl } = await startService(service, { KAFKA_BROKERS: kafkaBrokers!, KAFKA_USAGE_TOPIC: `healthz-${Date.now()}` });
    const until = Date.now() + 30_000;
    let last = await health(baseUrl);
    while (last.status !== 200 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      last = await health(baseUrl);
    }
    expect(last).toEqual({ status: 200, body: { status: 'ok', rateLimitStore: 'in-process' } });
  });
});

describe.skipIf(!ownBrokerPossible)('/healthz of services serving no calls when Kafka stops and comes back', () => {
  let workDir = '';
  let controlFile = '';
  let brokers: string[] = [];

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'healthz-usage-bus-'));
    const cacheRoot = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'italian-company-data');
    const local = await startLocalKafka({ cacheRoot, workDir, log: () => {} });
    brokers = local.brokers;
    controlFile = path.join(workDir, 'kafka-control.json');
    await writeKafkaControl(controlFile, local.control);
  });
  afterAll(async () => {
    if (controlFile) {
      const state = await readKafkaControl(controlFile);
      if (state.kind === 'local') await killAndWait(state.pid, 'SIGTERM', 15_000);
    }
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  // Before, only a paid call's failed send made a process notice: an idle replica answered 200
  // all through an outage, the gateway kept routing to it, and its first calls got the 503s.
  it('when the broker stops then an idle API and tool server answer 503 (usageBus unreachable) within seconds, say so once, and answer 200 once it is back', async () => {
    const started = await Promise.all(services.map((service) => startService(service, { KAFKA_BROKERS: brokers.join(','), KAFKA_USAGE_TOPIC: `healthz-idle-${Date.now()}` })));
    for (const { baseUrl } of started) expect(await healthOnce(baseUrl, 200, 30_000)).toEqual({ status: 200, body: { status: 'ok', rateLimitStore: 'in-process' } });

    await stopKafkaBroker(controlFile);
    const stoppedAt = Date.now();
    const noticed = await Promise.all(
      started.map(async ({ baseUrl }) => ({ answer: await healthOnce(baseUrl, 503, 30_000), afterMs: Date.now() - stoppedAt })),
    );
    for (const { answer, afterMs } of noticed) {
      expect(answer).toEqual({ status: 503, body: { status: 'unavailable', checks: { database: 'ok', usageBus: 'unreachable' }, rateLimitStore: 'in-process' } });
      // Two failed checks three seconds apart, plus a poll: about six seconds.
      expect(afterMs).toBeLessThan(10_000);
    }
    // Through several more checks' and reconnects' worth of outage, said once, not once per try.
    await new Promise((resolve) => setTimeout(resolve, 8_000));
    for (const running of started) {
      expect((await health(running.baseUrl)).status).toBe(503);
      expect(running.lines().filter((l) => l.msg === 'Kafka unreachable; paid calls are refused until it answers')).toEqual([expect.objectContaining({ level: 'warn' })]);
    }

    await startKafkaBroker(controlFile);
    for (const running of started) {
      expect(await healthOnce(running.baseUrl, 200, 60_000)).toEqual({ status: 200, body: { status: 'ok', rateLimitStore: 'in-process' } });
      // Once per recovery. A broker just back can still fail two idle checks in a row on a busy
      // machine (its partitions' leaders not yet elected): then the outage is said again and so is
      // the recovery, in turn, never twice in a row. The process's log reaches this test through
      // a pipe, which can lag its HTTP answer (CI once read the lines before the last recovery's),
      // so the last word is awaited, not read at once.
      const saidNow = () => running.lines().map((l) => l.msg).filter((msg) => msg === 'Kafka unreachable; paid calls are refused until it answers' || msg === 'Kafka reachable again; paid calls are served');
      const settledBy = Date.now() + 30_000;
      while (saidNow().at(-1) !== 'Kafka reachable again; paid calls are served' && Date.now() < settledBy) await new Promise((resolve) => setTimeout(resolve, 100));
      const said = saidNow();
      expect(said.length % 2, said.join('\n')).toBe(0);
      expect(said, said.join('\n')).toEqual(said.map((_, i) => (i % 2 === 0 ? 'Kafka unreachable; paid calls are refused until it answers' : 'Kafka reachable again; paid calls are served')));
    }
  }, 240_000);
});
