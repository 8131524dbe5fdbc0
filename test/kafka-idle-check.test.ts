// The Kafka usage sink's idle check (adapters/kafka/kafka-usage-sink.ts) against the suite's
// real broker, with the check's metadata request intercepted where a test needs it to fail: a
// check that cannot reach Kafka while sends can is a disagreement no running broker produces
// on its own. Its real outcome (a stopped broker) is in test/healthz-usage-bus.test.ts, through
// the API and tool-server processes.
import { randomUUID } from 'node:crypto';
import { KafkaJSConnectionError, KafkaJSNumberOfRetriesExceeded, KafkaJSProtocolError, type Kafka } from 'kafkajs';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { createKafka, createKafkaUsageSink, type KafkaUsageSink } from '../adapters/kafka/index.js';
import { isAppError } from '../core/errors/index.js';
import { createLogger } from '../core/logging/index.js';
import { usageEvent } from './billing-fixtures.js';

// Empty when the run was started with TEST_SERVICES=postgres.
const kafkaBrokers = inject('kafkaBrokers');
// The sink's tick (IDLE_CHECK_EVERY_MS): long enough for any check to have been made.
const TICK_MS = 3_000;
const UNREACHABLE = 'Kafka unreachable; paid calls are refused until it answers';
const REACHABLE_AGAIN = 'Kafka reachable again; paid calls are served';

interface Line {
  level: string;
  msg: string;
  err?: string;
}

/** A sink on the suite's broker whose idle checks are counted and, while `decide` is set, decided by the test. */
interface Probed {
  sink: KafkaUsageSink;
  lines: Line[];
  /** Idle checks made so far (metadata requests of the check's admin client). */
  checks(): number;
  /** The n-th check's outcome; unset: the real request. */
  decide: ((n: number) => Promise<unknown>) | undefined;
}

const open: KafkaUsageSink[] = [];
afterEach(async () => {
  for (const sink of open.splice(0)) await sink.close();
});

async function probedSink(): Promise<Probed> {
  const lines: Line[] = [];
  const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as Line) });
  const real = createKafka({ brokers: kafkaBrokers.split(','), clientId: 'kafka-idle-check', logger: createLogger({ level: 'silent' }) });
  let made = 0;
  const probed: Probed = { sink: undefined as unknown as KafkaUsageSink, lines, checks: () => made, decide: undefined };
  // ensureTopics' admin never asks describeCluster: the calls counted are the check client's
  // first request (made as the producer connects, not counted as a check) and the checks.
  const kafka = {
    producer: (options) => real.producer(options),
    admin: (options) => {
      const admin = real.admin(options);
      const describeCluster = admin.describeCluster.bind(admin);
      admin.describeCluster = () => {
        made++;
        return (probed.decide?.(made) ?? describeCluster()) as ReturnType<typeof describeCluster>;
      };
      return admin;
    },
  } as Pick<Kafka, 'producer' | 'admin'> as Kafka;
  probed.sink = createKafkaUsageSink({ kafka, topic: `usage-idle-check-${randomUUID().slice(0, 8)}`, partitions: 1, logger });
  open.push(probed.sink);
  await probed.sink.connect();
  await expect.poll(() => made, { timeout: 10_000, interval: 20 }).toBe(1);
  made = 0;
  return probed;
}

/** How kafkajs reports a broker that refuses connections (retries exceeded, the socket's error as cause). */
function refused(): Error {
  const cause = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED 127.0.0.1:9092', { broker: '127.0.0.1:9092', code: 'ECONNREFUSED' });
  return new KafkaJSNumberOfRetriesExceeded(cause, { retryCount: 0, retryTime: 0 });
}

function deferred(): { promise: Promise<never>; reject(err: unknown): void } {
  let reject!: (err: unknown) => void;
  const promise = new Promise<never>((_, r) => (reject = r));
  return { promise, reject };
}

const said = (p: Probed, msg: string) => p.lines.filter((l) => l.msg === msg);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!kafkaBrokers)('the Kafka usage sink\'s idle check', () => {
  it('when calls keep being acknowledged then no check is made; when they stop then checks are made and Kafka stays reachable', async () => {
    const p = await probedSink();
    const until = Date.now() + 3 * TICK_MS;
    while (Date.now() < until) {
      await p.sink.publish(usageEvent('org_idle_check'));
      await sleep(500);
    }
    expect(p.checks()).toBe(0);

    await expect.poll(() => p.checks(), { timeout: 3 * TICK_MS, interval: 100 }).toBeGreaterThanOrEqual(2);
    expect(p.sink.reachable?.()).toBe(true);
    expect(p.lines.filter((l) => l.level !== 'info')).toEqual([]);
    await p.sink.publish(usageEvent('org_idle_check'));
  }, 60_000);

  it('when two checks in a row cannot reach Kafka and no call comes then calls are refused at once, said in one line, until a reconnect succeeds', async () => {
    const p = await probedSink();
    p.decide = () => Promise.reject(refused());
    await expect.poll(() => p.sink.reachable?.(), { timeout: 4 * TICK_MS, interval: 50 }).toBe(false);
    expect(p.checks()).toBe(2);
    // Refused without waiting for Kafka: that is what counting it unreachable costs a call.
    const began = Date.now();
    const refusal = await p.sink.publish(usageEvent('org_idle_check')).then(() => undefined, (err: unknown) => err);
    expect(isAppError(refusal) && refusal.code).toBe('entitlement_unavailable');
    expect(Date.now() - began).toBeLessThan(500);
    expect(said(p, UNREACHABLE)).toEqual([expect.objectContaining({ level: 'warn', err: expect.stringContaining('ECONNREFUSED') })]);

    // The checks only ever take Kafka away: the broker answers the sink's own reconnect, and
    // that brings it back, whatever the checks would say.
    await expect.poll(() => p.sink.reachable?.(), { timeout: 20_000, interval: 100 }).toBe(true);
    expect(said(p, REACHABLE_AGAIN)).toHaveLength(1);
    p.decide = undefined;
    await p.sink.publish(usageEvent('org_idle_check'));
    expect(said(p, UNREACHABLE)).toHaveLength(1);
  }, 60_000);

  it('when a check fails to reach Kafka while a call\'s event is acknowledged then the send outweighs it: Kafka stays reachable', async () => {
    const p = await probedSink();
    const second = deferred();
    p.decide = (n) => (n === 1 ? Promise.reject(refused()) : second.promise);
    await expect.poll(() => p.checks(), { timeout: 3 * TICK_MS, interval: 50 }).toBe(2);
    // The second check is under way, the first failed: a call is served meanwhile.
    await p.sink.publish(usageEvent('org_idle_check'));
    second.reject(refused());
    p.decide = undefined;
    await sleep(200);
    expect(p.sink.reachable?.()).toBe(true);
    await sleep(2 * TICK_MS);
    expect(p.sink.reachable?.()).toBe(true);
    expect(said(p, UNREACHABLE)).toEqual([]);
  }, 60_000);

  it('when checks fail for a reason other than reaching Kafka then Kafka stays reachable, and that is said once', async () => {
    const p = await probedSink();
    p.decide = () => Promise.reject(new KafkaJSProtocolError('Cluster authorization failed'));
    await expect.poll(() => p.checks(), { timeout: 5 * TICK_MS, interval: 100 }).toBeGreaterThanOrEqual(3);
    expect(p.sink.reachable?.()).toBe(true);
    expect(said(p, UNREACHABLE)).toEqual([]);
    expect(said(p, 'Kafka idle check failed for a reason other than reaching Kafka; not counted')).toEqual([
      expect.objectContaining({ level: 'warn', err: 'Cluster authorization failed' }),
    ]);
    p.decide = undefined;
    await p.sink.publish(usageEvent('org_idle_check'));
  }, 60_000);

  it('when two checks in a row get no answer then Kafka counts as unreachable, each after the check\'s 5 s deadline', async () => {
    const p = await probedSink();
    const began = Date.now();
    // A broker that takes the request and never answers.
    p.decide = () => new Promise<never>(() => {});
    await expect.poll(() => p.sink.reachable?.(), { timeout: 2 * (TICK_MS + 5_000) + TICK_MS, interval: 100 }).toBe(false);
    expect(Date.now() - began).toBeGreaterThanOrEqual(2 * 5_000);
    expect(said(p, UNREACHABLE)).toEqual([expect.objectContaining({ level: 'warn', err: 'Kafka did not answer before the deadline' })]);
  }, 60_000);
});
