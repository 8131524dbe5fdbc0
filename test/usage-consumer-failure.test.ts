// A usage consumer that stops consuming must say so. On Kafka, kafkajs disconnects its
// consumer for good after a crash whose cause it does not retry (a TypeError, an error Kafka
// marks not retriable) and restarts nothing: before, the billing worker stayed up, consuming
// nothing, and no balance or flag ever moved again. On the Postgres bus the same fault was
// retried for ever, with the same effect. Both now settle `failed`; a failure that may pass
// is still retried, and shows as `retrying` meanwhile. Kafka runs on the suite's real broker.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, createKafkaUsageConsumer } from '../adapters/kafka/index.js';
import { createDb, migrateLatest } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageConsumer, UsageConsumerFailure, type ApplyUsageBatch, type UsageBusConsumer, type UsageBusMessage } from '../core/usage/index.js';
import { waitFor } from './billing-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { kafkaBrokers } from './support/kafka.js';

const logger = createLogger({ level: 'silent' });

// The Postgres bus consumer takes every row of usage_bus_batches: a database of this file's own.
let scratch: ScratchDatabase;
let db: Knex;
beforeAll(async () => {
  scratch = await createScratchDatabase('consumer_failure');
  db = createDb({ connectionString: scratch.url, poolMax: 6, applicationName: 'consumer-failure-test' });
  await migrateLatest(db);
});
afterAll(async () => {
  await db?.destroy();
  await scratch?.drop();
});

let consumer: UsageBusConsumer | undefined;
afterEach(async () => {
  await consumer?.stop();
  consumer = undefined;
});

const outcome = (messages: UsageBusMessage[]) => ({ applied: messages.length, appliedEventIds: [], duplicates: 0, deadLetters: [] });

/** Whether `promise` has settled within `ms`. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), ms))]);
}

/** A bug in applying: what a TypeError from applyUsageBatch looks like to the bus. */
const faultyApply: ApplyUsageBatch = async () => {
  const broken = undefined as unknown as { organizationId: string };
  return outcome([{ value: broken.organizationId, ref: 'never' }]);
};

describe('the Kafka usage consumer', () => {
  // kafkajs's own lines: how we see it restart its consumer.
  const kafkaLines: string[] = [];
  const kafkaLogger = createLogger({ level: 'debug', write: (line) => void kafkaLines.push((JSON.parse(line) as { msg: string }).msg) });

  /** A consumer on a topic of its own, with one message already waiting there. */
  async function withWaitingMessage(): Promise<{ topic: string; make: () => UsageBusConsumer }> {
    const client = createKafka({ brokers: kafkaBrokers(), clientId: 'consumer-failure-test', logger: kafkaLogger });
    const suffix = randomUUID().slice(0, 8);
    const topic = `usage-events-failure-${suffix}`;
    const make = () => createKafkaUsageConsumer({ kafka: client, db, topic, deadLetterTopic: `${topic}-dlq`, groupId: `failure-${suffix}`, partitions: 1, logger });
    const producer = client.producer();
    await producer.connect();
    const admin = client.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true });
    await admin.disconnect();
    await producer.send({ topic, messages: [{ key: 'org', value: `message ${suffix}` }] });
    await producer.disconnect();
    return { topic, make };
  }

  it('when applying a batch throws a TypeError then kafkajs stops the consumer for good and `failed` settles naming the TypeError', async () => {
    const { make } = await withWaitingMessage();
    consumer = make();
    await consumer.start(faultyApply);
    const failure = await Promise.race([consumer.failed, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000))]);
    expect(failure).toBeInstanceOf(UsageConsumerFailure);
    expect(failure!.message).toMatch(/^the Kafka consumer crashed on an error kafkajs does not retry, and kafkajs will not restart it \(TypeError: Cannot read properties of undefined \(reading 'organizationId'\)\)$/);
    expect(failure!.cause).toBeInstanceOf(TypeError);
    expect(consumer.state()).toBe('failed');
  });

  it('when applying fails for a reason that passes then the consumer is retrying meanwhile, `failed` never settles, and the message is applied', async () => {
    const { make } = await withWaitingMessage();
    consumer = make();
    let attempts = 0;
    const states: string[] = [];
    const applied: UsageBusMessage[] = [];
    // A database error that passes: kafkajs retries the batch, crashes once its retries are
    // spent, and restarts the consumer (restart: true), which then succeeds.
    const flakyApply: ApplyUsageBatch = async (_trx, messages) => {
      attempts += 1;
      states.push(consumer!.state());
      if (attempts <= 20) throw Object.assign(new Error('connection terminated unexpectedly'), { code: '57P01' });
      applied.push(...messages);
      return outcome(messages);
    };
    kafkaLines.length = 0;
    await consumer.start(flakyApply);
    await waitFor('the message applied', async () => applied.length > 0, 45_000);
    const restarts = kafkaLines.filter((msg) => msg.startsWith('Restarting the consumer')).length;
    // Retrying from the second attempt on, across kafkajs's restart, until one succeeds.
    expect(states[0]).toBe('consuming');
    expect(states.slice(1)).toEqual(states.slice(1).map(() => 'retrying'));
    expect(restarts).toBeGreaterThan(0);
    expect(consumer.state()).toBe('consuming');
    expect(await settlesWithin(consumer.failed, 100)).toBe(false);
  }, 60_000);

  it('when messages wait then the backlog counts them, and once they are applied and committed it is 0', async () => {
    const { make } = await withWaitingMessage();
    consumer = make();
    // A fresh group has committed nothing yet: everything on the topic waits.
    expect(await consumer.backlog()).toEqual({ events: 1 });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    await consumer.start(async (_trx, messages) => {
      await held;
      return outcome(messages);
    });
    expect(await consumer.backlog()).toEqual({ events: 1 });
    release();
    await waitFor('backlog 0', async () => (await consumer!.backlog()).events === 0, 20_000);
  });
});

describe('the Postgres usage bus consumer', () => {
  const publish = async (n: number) => {
    const events = Array.from({ length: n }, (_, i) => ({ n: i }));
    await db('usage_bus_batches').insert({ events: JSON.stringify(events), event_count: n });
  };
  const make = () => createPostgresUsageConsumer({ db, connectionString: scratch.url, logger, pollMs: 100, concurrency: 2 });

  it('when applying a batch throws a TypeError then every loop stops, `failed` settles naming it, and the batch stays on the bus', async () => {
    await publish(3);
    consumer = make();
    await consumer.start(faultyApply);
    const failure = await Promise.race([consumer.failed, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 10_000))]);
    expect(failure).toBeInstanceOf(UsageConsumerFailure);
    expect(failure!.message).toMatch(/^a claim loop of the Postgres usage bus ended on an error it does not retry \(TypeError: Cannot read properties of undefined \(reading 'organizationId'\)\)$/);
    expect(consumer.state()).toBe('failed');
    await consumer.stop();
    // Rolled back: the next worker applies it.
    expect(await consumer.backlog()).toMatchObject({ events: 3, batches: 1 });
    await db('usage_bus_batches').del();
  });

  it('when applying fails for a reason that passes then it is retrying meanwhile, `failed` never settles, and the backlog goes from 2 to 0', async () => {
    await publish(2);
    consumer = make();
    expect(await consumer.backlog()).toMatchObject({ events: 2, batches: 1, oldestEnqueuedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) });
    let attempts = 0;
    const applied: UsageBusMessage[] = [];
    await consumer.start(async (_trx, messages) => {
      attempts += 1;
      if (attempts <= 4) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
      applied.push(...messages);
      return outcome(messages);
    });
    await waitFor('retrying', async () => consumer!.state() === 'retrying', 5_000);
    await waitFor('the batch applied', async () => applied.length === 2, 20_000);
    await waitFor('consuming again', async () => consumer!.state() === 'consuming', 5_000);
    expect(await consumer.backlog()).toEqual({ events: 0, batches: 0, oldestEnqueuedAt: null });
    expect(await settlesWithin(consumer.failed, 100)).toBe(false);
  });
});
