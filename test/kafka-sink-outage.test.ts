// The Kafka usage sink while the suite's real broker is stopped and started again: a paid call
// waits at most about ten seconds for its 503, later calls are refused at once while Kafka is
// still gone, and an event whose call was refused never reaches the topic, even when the
// broker comes back while the refused send was still retrying.
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createKafka, createKafkaUsageSink, PUBLISH_DEADLINE_MS, type KafkaUsageSink } from '../adapters/kafka/index.js';
import { isAppError } from '../core/errors/index.js';
import { createLogger } from '../core/logging/index.js';
import type { UsageEvent } from '../core/usage/index.js';
import { applyUsageBatch } from '../core/billing/apply-usage-batch.js';
import { recordRefusedCalls } from '../core/billing/index.js';
import { allowanceOf, createBillingOrg, usageEvent, waitFor } from './billing-fixtures.js';
import { testDb } from './support/database.js';
import { killAndWait, readKafkaControl, startKafkaBroker, stopKafkaBroker, writeKafkaControl } from './services/kafka-control.js';
import { startLocalKafka } from './services/kafka-local.js';

const logger = createLogger({ level: 'silent' });
// The sink's own lines, for the refund ids it must log.
const sinkLines: { level: string; msg: string; eventIds?: string[] }[] = [];
const sinkLogger = createLogger({ level: 'info', write: (line) => sinkLines.push(JSON.parse(line)) });
// A broker of this file's own: stopping the suite's broker would fail whatever Kafka test
// another worker runs meanwhile. Started from the jars the suite's local broker came from; with
// Kafka from KAFKA_BROKERS, a container or TEST_SERVICES=postgres there is none to copy.
const ownBrokerPossible = (await readKafkaControl(inject('kafkaControlFile'))).kind === 'local';
let brokers: string[] = [];
let controlFile = '';
const stopKafka = (options: { hard?: boolean }) => stopKafkaBroker(controlFile, options);
const startKafka = () => startKafkaBroker(controlFile);
const kafkaBrokers = () => brokers;

/** How long publish took to settle, and how. */
async function timed(publish: Promise<void>): Promise<{ ms: number; code: string | false | undefined }> {
  const began = Date.now();
  try {
    await publish;
    return { ms: Date.now() - began, code: undefined };
  } catch (err) {
    return { ms: Date.now() - began, code: isAppError(err) && err.code };
  }
}

/** The event ids on the topic, read from the beginning by a group of its own. */
async function eventIdsOn(topic: string, expected: number): Promise<string[]> {
  const kafka = createKafka({ brokers: kafkaBrokers(), clientId: 'kafka-sink-outage-reader', logger });
  const reader = kafka.consumer({ groupId: `outage-reader-${randomUUID()}`, maxWaitTimeInMs: 200 });
  const ids: string[] = [];
  await reader.connect();
  try {
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({ eachMessage: async ({ message }) => void ids.push((JSON.parse(message.value!.toString()) as UsageEvent).eventId) });
    await waitFor(`${expected} events on ${topic}`, async () => ids.length >= expected, 30_000);
    // Whatever else is there (a late copy of a refused event) has had time to show up too.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  } finally {
    await reader.disconnect();
  }
  return ids;
}

describe.skipIf(!ownBrokerPossible)('the Kafka usage sink during a broker outage', () => {
  const topic = `usage-events-outage-${randomUUID().slice(0, 8)}`;
  const db = testDb({ poolMax: 2 });
  let organizationId = '';
  let sink: KafkaUsageSink;
  let workDir = '';

  beforeAll(async () => {
    workDir = await mkdtemp(path.join(os.tmpdir(), 'kafka-sink-outage-'));
    const cacheRoot = path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'italian-company-data');
    const local = await startLocalKafka({ cacheRoot, workDir, log: () => {} });
    brokers = local.brokers;
    controlFile = path.join(workDir, 'kafka-control.json');
    await writeKafkaControl(controlFile, local.control);
    // kafkajs retries a send far longer than the deadline here, long enough to see the broker
    // come back: a refused batch must not land even then.
    const retry = { initialRetryTime: 200, retries: 60, maxRetryTime: 1_000 };
    ({ organizationId } = await createBillingOrg(db, { credits: 1_000 }));
    // As the composition roots wire it: a refused call whose event may still land is recorded.
    const recordRefused = (events: UsageEvent[]) => recordRefusedCalls(db, events);
    sink = createKafkaUsageSink({ kafka: createKafka({ brokers: kafkaBrokers(), clientId: 'kafka-sink-outage', logger }), topic, partitions: 1, logger: sinkLogger, retry, recordRefused });
    await sink.connect();
  });
  afterAll(async () => {
    await sink?.close();
    await db.destroy();
    if (controlFile) {
      const state = await readKafkaControl(controlFile);
      if (state.kind === 'local') await killAndWait(state.pid, 'SIGTERM', 15_000);
    }
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('when Kafka stops then paid calls get entitlement_unavailable within the deadline, later ones at once, and refused events never land', async () => {
    const served = usageEvent(organizationId);
    await sink.publish(served);

    await stopKafka({ hard: true });
    const refused = [usageEvent(organizationId), usageEvent(organizationId), usageEvent(organizationId)];
    const first = await Promise.all(refused.map((e) => timed(sink.publish(e))));
    for (const r of first) {
      expect(r.code).toBe('entitlement_unavailable');
      expect(r.ms).toBeLessThan(PUBLISH_DEADLINE_MS + 1_000);
    }
    // The reconnect that follows is failing too: a caller does not wait for another cycle.
    const again = usageEvent(organizationId);
    refused.push(again);
    const fast = await timed(sink.publish(again));
    expect(fast.code).toBe('entitlement_unavailable');
    expect(fast.ms).toBeLessThan(1_000);

    // Back while the refused batch's send may still be retrying in kafkajs. The sink finds out
    // by itself, with no call coming: the first call after is served, not refused while a
    // reconnect it started is under way.
    await startKafka();
    await expect.poll(() => sinkLines.some((l) => l.msg === 'Kafka reachable again; paid calls are served'), { timeout: 30_000, interval: 200 }).toBe(true);
    const after = usageEvent(organizationId);
    expect((await timed(sink.publish(after))).code).toBeUndefined();

    const ids = await eventIdsOn(topic, 2);
    expect(ids).toContain(served.eventId);
    expect(ids).toContain(after.eventId);
    for (const e of refused) expect(ids).not.toContain(e.eventId);
  }, 180_000);

  it('when the broker stalls with a send on the wire then the calls are refused at the deadline, recorded as refused, and not charged when the broker stores their events after all', async () => {
    const state = await readKafkaControl(controlFile);
    if (state.kind !== 'local') throw new Error('the broker of this file is a local one');
    await sink.publish(usageEvent(organizationId)); // connected and warm
    sinkLines.length = 0;
    process.kill(state.pid, 'SIGSTOP');
    let refused: UsageEvent[];
    try {
      refused = [usageEvent(organizationId), usageEvent(organizationId)];
      const results = await Promise.all(refused.map((e) => timed(sink.publish(e))));
      for (const r of results) {
        expect(r.code).toBe('entitlement_unavailable');
        expect(r.ms).toBeLessThan(PUBLISH_DEADLINE_MS + 1_000);
      }
    } finally {
      process.kill(state.pid, 'SIGCONT');
    }
    // Recorded as the batch is given up, the same moment as its callers' refusals (their own timers).
    const refusedRows = () => db('usage_ledger').whereIn('event_id', refused.map((e) => e.eventId)).andWhere({ entry_type: 'refused' }).pluck<string[]>('event_id');
    await expect.poll(async () => (await refusedRows()).sort(), { timeout: 5_000 }).toEqual(refused.map((e) => e.eventId).sort());
    expect(sinkLines.filter((l) => l.level === 'error')).toEqual([]);
    // The sink serves again once the broker has resumed; whatever of the refused batch the
    // broker stored is on the topic, and the worker's apply charges none of it.
    const after = usageEvent(organizationId);
    await waitFor('a call served again', async () => (await timed(sink.publish(after))).code === undefined, 60_000);
    const onTopic = await eventIdsOn(topic, 1);
    const landed = refused.filter((e) => onTopic.includes(e.eventId));
    const before = (await allowanceOf(db, organizationId)).credits_balance;
    const outcome = await db.transaction((trx) => applyUsageBatch(trx, landed.map((e, i) => ({ value: Buffer.from(JSON.stringify(e)), ref: `stall#${i}` })), { bus: 'kafka' }));
    expect(outcome.appliedEventIds).toEqual([]);
    expect((await allowanceOf(db, organizationId)).credits_balance).toBe(before);
  }, 120_000);
});
