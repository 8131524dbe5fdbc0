// The same contract for both usage buses: what the API publishes is charged once, however
// often it is delivered; a poison message is dead-lettered and never blocks what follows;
// a stopped worker drains and the next one carries on. Kafka runs on the suite's real broker.
import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, createKafkaUsageConsumer, createKafkaUsageSink } from '../adapters/kafka/index.js';
import { startBillingWorker, type BillingWorker } from '../billing-worker/start-billing-worker.js';
import { periodOf } from '../core/billing/billing-period.js';
import { reconcileLedger } from '../core/billing/reconcile-ledger.js';
import { createDb, migrateLatest } from '../core/db/index.js';
import { isAppError } from '../core/errors/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageConsumer, createPostgresUsageSink, type UsageBusConsumer, type UsageEvent, type UsageSink } from '../core/usage/index.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { kafkaBrokers } from './support/kafka.js';
import { allowanceOf, createBillingOrg, ledgerCount, usageEvent, waitFor } from './billing-fixtures.js';

// Warnings kept (not printed) for the tests that look for one.
const warnings: Record<string, unknown>[] = [];
const logger = createLogger({ level: 'warn', write: (line) => warnings.push(JSON.parse(line) as Record<string, unknown>) });

interface Bus {
  sink(): UsageSink;
  consumer(groupSuffix?: string): UsageBusConsumer;
  /** Puts a message on the bus that is not a usage event. */
  injectPoison(marker: string): Promise<void>;
  /** Puts these messages on the bus as one batch (Postgres: one row; Kafka: one partition, in order). */
  injectBatch(values: string[]): Promise<void>;
  /** Where dead letters can be seen beyond usage_dead_letters (Kafka: the DLQ topic). */
  deadLetterVisible?(marker: string): Promise<{ reason: string } | undefined>;
  close(): Promise<void>;
}

// Each bus gets a database of its own: the Postgres bus consumer takes every row of
// usage_bus_batches, and other test files publish there too.
let scratch: ScratchDatabase;
let db: Knex;
let connectionString: string;
beforeAll(async () => {
  scratch = await createScratchDatabase('billing_bus');
  connectionString = scratch.url;
  db = createDb({ connectionString, poolMax: 8, applicationName: 'billing-bus-test' });
  await migrateLatest(db);
  // A ledger that refuses one product: a well-formed event whose application fails on its own
  // data (SQLSTATE 23514) for as long as this scratch database lives, a topic replayed included.
  await db.raw("ALTER TABLE usage_ledger ADD CONSTRAINT test_apply_fails CHECK (product NOT LIKE 'apply-fails-%') NOT VALID");
});
afterAll(async () => {
  await db.destroy();
  await scratch.drop();
});

const buses: Record<string, () => Promise<Bus>> = {
  postgres: async () => ({
    sink: () => createPostgresUsageSink(db, { logger }),
    consumer: () => createPostgresUsageConsumer({ db, connectionString, logger, batchSize: 100, pollMs: 200 }),
    injectPoison: async (marker) => {
      // A batch with a non-event in it, and a row that is not a batch at all.
      await db('usage_bus_batches').insert([
        { events: JSON.stringify([{ garbage: marker }]), event_count: 1 },
        { events: JSON.stringify({ garbage: marker }), event_count: 1 },
      ]);
    },
    injectBatch: async (values) => {
      await db('usage_bus_batches').insert({ events: `[${values.join(',')}]`, event_count: values.length });
    },
    close: async () => {},
  }),
  kafka: async () => {
    const brokers = kafkaBrokers();
    const suffix = randomUUID().slice(0, 8);
    const topic = `usage-events-test-${suffix}`;
    const deadLetterTopic = `usage-events-dlq-test-${suffix}`;
    const kafka = createKafka({ brokers, clientId: 'billing-bus-test', logger });
    const sinks: UsageSink[] = [];
    const raw = kafka.producer();
    await raw.connect();
    return {
      sink: () => {
        const sink = createKafkaUsageSink({ kafka, topic, partitions: 3, logger });
        sinks.push(sink);
        return sink;
      },
      consumer: (groupSuffix = '') =>
        createKafkaUsageConsumer({ kafka, db, topic, deadLetterTopic, groupId: `billing-test-${suffix}${groupSuffix}`, partitions: 3, logger, maxBatch: 100 }),
      injectPoison: async (marker) => {
        await raw.send({ topic, messages: [{ key: 'nobody', value: `this is not an event ${marker}` }] });
      },
      injectBatch: async (values) => {
        await raw.send({ topic, messages: values.map((value) => ({ key: 'one-partition', value })) });
      },
      deadLetterVisible: async (marker) => {
        const reader = kafka.consumer({ groupId: `dlq-reader-${randomUUID()}` });
        await reader.connect();
        await reader.subscribe({ topic: deadLetterTopic, fromBeginning: true });
        const found = await new Promise<{ reason: string } | undefined>((resolve) => {
          const timer = setTimeout(() => resolve(undefined), 15_000);
          void reader.run({
            eachMessage: async ({ message }) => {
              if (message.value?.toString().includes(marker)) {
                clearTimeout(timer);
                resolve({ reason: message.headers?.['dead-letter-reason']?.toString() ?? '' });
              }
            },
          });
        });
        await reader.disconnect();
        return found;
      },
      close: async () => {
        for (const sink of sinks) await sink.close();
        await raw.disconnect();
      },
    };
  },
};

describe.each(Object.keys(buses))('the %s usage bus', (name) => {
  let bus: Bus;
  let sink: UsageSink;
  let worker: BillingWorker | undefined;
  const start = async (consumer = bus.consumer()) => (worker = await startBillingWorker({ db, consumer, logger, rolloverIntervalMs: 60_000 }));

  beforeAll(async () => {
    bus = await buses[name]!();
    sink = bus.sink();
  });
  afterAll(async () => {
    await worker?.stop();
    await bus.close();
  });

  const publishAll = (events: UsageEvent[]) => Promise.all(events.map((e) => sink.publish(e)));
  const ledgerHas = (organizationId: string, n: number) => waitFor(`${n} ledger rows`, async () => (await ledgerCount(db, organizationId)) === n);

  it('when events are published then each is charged exactly once', async () => {
    await start();
    const orgs = await Promise.all([1, 2, 3].map(() => createBillingOrg(db, { credits: 10_000 })));
    const events = Array.from({ length: 300 }, (_, i) => usageEvent(orgs[i % 3]!.organizationId, { quantity: 1 + (i % 5) }));
    await publishAll(events);
    for (const { organizationId } of orgs) {
      await ledgerHas(organizationId, 100);
      const spent = events.filter((e) => e.organizationId === organizationId).reduce((n, e) => n + e.quantity, 0);
      expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(10_000 - spent);
    }
    expect((await reconcileLedger(db, { organizationIds: orgs.map((o) => o.organizationId) })).differences).toEqual([]);
  });

  it('when the same events are delivered again then no balance changes', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const events = Array.from({ length: 20 }, () => usageEvent(organizationId));
    await publishAll(events);
    await ledgerHas(organizationId, 20);
    const before = await allowanceOf(db, organizationId);
    await publishAll(events); // a producer retry or a replayed topic
    const marker = usageEvent(organizationId, { quantity: 0 });
    await sink.publish(marker); // once this is in, the repeats before it have been consumed
    await ledgerHas(organizationId, 21);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(before?.credits_balance);
  });

  it('when a poison message is on the bus then it is dead-lettered with its reason and later events still apply', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const marker = randomUUID();
    await bus.injectPoison(marker);
    await publishAll([usageEvent(organizationId), usageEvent(organizationId)]);
    await ledgerHas(organizationId, 2);
    const row = await waitFor('dead-letter row', () => db('usage_dead_letters').where('payload', 'like', `%${marker}%`).first());
    expect(row.bus).toBe(name);
    expect(row.reason).toMatch(/not JSON|invalid usage event/);
    if (bus.deadLetterVisible) expect((await bus.deadLetterVisible(marker))?.reason).toMatch(/not JSON/);
  });

  it('when one event of a batch keeps failing in the ledger then only it is dead-lettered and the rest of its batch is charged', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    // A well-formed event the ledger refuses (the constraint made in beforeAll; a time Postgres
    // cannot store, year 0, is now refused before, by the worker's own time rule): SQLSTATE 23514.
    const bad = usageEvent(organizationId, { product: `apply-fails-${randomUUID()}` });
    const good = [usageEvent(organizationId), usageEvent(organizationId)];
    await bus.injectBatch([good[0], bad, good[1]].map((e) => JSON.stringify(e)));
    await ledgerHas(organizationId, 2);
    expect(await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'usage' }).orderBy('event_id').pluck('event_id')).toEqual(good.map((e) => e.eventId).sort());
    const row = await waitFor('dead-letter row', () => db('usage_dead_letters').where('payload', 'like', `%${bad.eventId}%`).first());
    expect(row.bus).toBe(name);
    expect(row.reason).toMatch(/^apply failed: SQLSTATE 23514: .*test_apply_fails.* \((usage_bus_batches#\d+\/1|usage-events-test-\w+\/\d+@\d+)\)$/);
    expect(JSON.parse(row.payload)).toEqual(bad);
    if (bus.deadLetterVisible) expect((await bus.deadLetterVisible(bad.eventId))?.reason).toMatch(/^apply failed: SQLSTATE 23514/);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(1_000 - 10);
  });

  it('when an event says it happened years ahead of the worker or before 2000 then it is a dead letter saying so, counted, the month does not move, and the rest of its batch is charged', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000, creditsPerPeriod: 100_000 });
    const future = usageEvent(organizationId, { occurredAt: '2099-01-01T00:00:00Z' });
    const ancient = usageEvent(organizationId, { occurredAt: '1900-01-01T00:00:00Z' });
    const good = [usageEvent(organizationId), usageEvent(organizationId)];
    const counted = worker!.stats().deadLetters;
    await bus.injectBatch([future, good[0], ancient, good[1]].map((e) => JSON.stringify(e)));
    await ledgerHas(organizationId, 2);
    const reasonOf = async (eventId: string) => (await waitFor('dead-letter row', () => db('usage_dead_letters').where('payload', 'like', `%${eventId}%`).first())).reason as string;
    expect(await reasonOf(future.eventId)).toMatch(/^occurredAt 2099-01-01T00:00:00Z is \d+ days ahead of the billing worker's clock \(\S+Z\), more than the 5 min allowed: check the clock of the host that produced it/);
    expect(await reasonOf(ancient.eventId)).toMatch(/^occurredAt 1900-01-01T00:00:00Z is before 2000-01-01/);
    if (bus.deadLetterVisible) expect((await bus.deadLetterVisible(future.eventId))?.reason).toMatch(/^occurredAt 2099-01-01T00:00:00Z is \d+ days ahead/);
    await waitFor('dead letters counted', async () => worker!.stats().deadLetters - counted === 2);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: periodOf(new Date()), credits_balance: 1_000 - 10 });
    expect(await ledgerCount(db, organizationId, 'period_rollover')).toBe(0);
  });

  it('when an event id comes again with different content then nothing more is charged, nothing is dead-lettered, and a warning names the id and each difference', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const first = usageEvent(organizationId, { product: 'company-financials', quantity: 5 });
    await publishAll([first]);
    await ledgerHas(organizationId, 1);
    const altered = { ...first, product: 'company-profile', quantity: 8 };
    const after = usageEvent(organizationId);
    await bus.injectBatch([JSON.stringify(altered), JSON.stringify(after)]);
    await ledgerHas(organizationId, 2);
    const warning = await waitFor('the warning', async () => warnings.find((w) => w.eventId === first.eventId));
    expect(warning).toMatchObject({ level: 'warn', msg: 'usage event id repeated with different content: the first was charged, this one dropped', bus: name, differences: 'product: company-financials → company-profile; quantity: 5 → 8' });
    expect(await db('usage_dead_letters').where('payload', 'like', `%${first.eventId}%`).pluck('id')).toEqual([]);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(1_000 - 10);
    // The same event again, unchanged, is a plain duplicate: no warning.
    await bus.injectBatch([JSON.stringify(after), JSON.stringify(usageEvent(organizationId))]);
    await ledgerHas(organizationId, 3);
    expect(warnings.filter((w) => w.eventId === after.eventId)).toEqual([]);
  });

  it('when a message carries a NUL character then it is dead-lettered with the NUL written out and later events still apply', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    // Postgres text cannot hold NUL: the event is refused by its schema (the field named), and a
    // message that is not even JSON keeps its NUL as the six characters \u0000 in the dead letter.
    const withNul = usageEvent(organizationId, { product: 'company-financials\u0000' });
    const marker = randomUUID();
    const values = [JSON.stringify(withNul)];
    if (name === 'kafka') values.push(`not an event\u0000${marker}`);
    await bus.injectBatch(values);
    await publishAll([usageEvent(organizationId)]);
    await ledgerHas(organizationId, 1);
    const refused = await waitFor('dead-letter row', () => db('usage_dead_letters').where('payload', 'like', `%${withNul.eventId}%`).first());
    expect(refused.reason).toMatch(/^invalid usage event: product: must not contain the NUL character \(U\+0000\)/);
    expect(JSON.parse(refused.payload)).toEqual(withNul);
    if (name === 'kafka') {
      const raw = await waitFor('dead-letter row', () => db('usage_dead_letters').where('payload', 'like', `%${marker}%`).first());
      expect(raw.payload).toBe(`not an event\\u0000${marker}`);
      expect(raw.reason).toMatch(/^not JSON/);
    }
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(1_000 - 5);
  });

  it('when an organization runs out of credits then the worker sets credits_exhausted', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 20 });
    await publishAll([usageEvent(organizationId, { quantity: 10, product: 'company-credit-report' }), usageEvent(organizationId, { quantity: 8, product: 'company-profile' })]);
    await ledgerHas(organizationId, 2);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 2, credits_exhausted: true });
  });

  it('when the worker is stopped mid-stream then it drains, and the next worker charges the rest once', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100_000 });
    const events = Array.from({ length: 1_000 }, () => usageEvent(organizationId, { quantity: 1 }));
    const publishing = publishAll(events);
    await waitFor('some rows applied', async () => (await ledgerCount(db, organizationId)) > 0);
    await worker!.stop();
    await publishing;
    await start();
    await ledgerHas(organizationId, 1_000);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(99_000);
  });

  it('when a batch stays in flight longer than batchStallMs then the worker is `stalled` and `failed` says for how long, and the batch is still charged once', async () => {
    await worker?.stop();
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const stalling = await startBillingWorker({ db, consumer: bus.consumer(), logger, rolloverIntervalMs: 60_000, batchStallMs: 1_000 });
    worker = stalling;
    // Its batch waits for this lock on the allowance, in flight as on a connection that stopped
    // answering (test/billing-worker-process.test.ts freezes a real one).
    const trx = await db.transaction();
    let failure: Awaited<BillingWorker['failed']> | undefined;
    try {
      await trx('allowances').where({ organization_id: organizationId }).forUpdate().first();
      await publishAll([usageEvent(organizationId), usageEvent(organizationId)]);
      failure = await Promise.race([stalling.failed, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000))]);
      expect(stalling.state()).toBe('stalled');
      expect(stalling.stalledSince()!.getTime()).toBeLessThanOrEqual(Date.now() - 1_000);
    } finally {
      await trx.commit();
    }
    expect(failure?.message).toMatch(/^a usage batch has been in flight \d+ s \(BILLING_BATCH_STALL_MS allows 1 s\): likely a database connection that stopped answering$/);
    await stalling.stop();
    await start();
    await ledgerHas(organizationId, 2);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(1_000 - 10);
  });

  if (name === 'kafka') {
    it('when the whole topic is replayed by a fresh consumer group then no balance changes', async () => {
      const orgIds = (await db('allowances').pluck<string[]>('organization_id'));
      const before = await db('allowances').whereIn('organization_id', orgIds).orderBy('organization_id').select('organization_id', 'credits_balance', 'calls_used');
      const ledgerBefore = Number((await db('usage_ledger').count<{ n: string }>({ n: '*' }).first())?.n);
      const replay = await startBillingWorker({ db, consumer: bus.consumer('-replay'), logger, rolloverIntervalMs: 60_000 });
      await waitFor('replay consumed the topic', async () => replay.stats().duplicates >= 1_300, 60_000);
      await replay.stop();
      expect(await db('allowances').whereIn('organization_id', orgIds).orderBy('organization_id').select('organization_id', 'credits_balance', 'calls_used')).toEqual(before);
      expect(Number((await db('usage_ledger').count<{ n: string }>({ n: '*' }).first())?.n)).toBe(ledgerBefore);
    });

    it('when Kafka cannot be reached then publish refuses with entitlement_unavailable (503) instead of resolving', async () => {
      const dead = new Kafka({ brokers: ['127.0.0.1:1'], logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 300 });
      const unreachable = createKafkaUsageSink({ kafka: dead, topic: 'usage-events', partitions: 1, logger, retry: { initialRetryTime: 50, retries: 1, maxRetryTime: 100 } });
      const results = await Promise.allSettled([1, 2, 3].map(() => unreachable.publish(usageEvent('org_x'))));
      for (const r of results) {
        expect(r.status).toBe('rejected');
        const reason = (r as PromiseRejectedResult).reason;
        expect(isAppError(reason) && reason.code).toBe('entitlement_unavailable');
        expect(reason.status).toBe(503);
      }
      await unreachable.close();
    });
  }
});
