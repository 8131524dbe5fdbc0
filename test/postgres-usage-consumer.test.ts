// How the Postgres bus consumer cuts the batch rows waiting on the bus into transactions. The
// billing itself is the contract test's business (billing-bus-contract.test.ts); here `apply`
// only records what each transaction was handed.
import type { Knex } from 'knex';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageConsumer, createPostgresUsageSink, type UsageBusConsumer, type UsageBusMessage } from '../core/usage/index.js';
import { newRequestId } from '../core/ids/index.js';
import { waitFor } from './billing-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { hostAndPort, startTcpProxy } from './support/tcp-proxy.js';

const logger = createLogger({ level: 'silent' });

// The consumer takes every row of usage_bus_batches: a database of its own.
let scratch: ScratchDatabase;
let db: Knex;
beforeAll(async () => {
  scratch = await createScratchDatabase('usage_consumer');
  db = createDb({ connectionString: scratch.url, poolMax: 4, applicationName: 'usage-consumer-test' });
  await migrateLatest(db);
});
afterAll(async () => {
  await db.destroy();
  await scratch.drop();
});

describe('the Postgres usage bus consumer', () => {
  let consumer: UsageBusConsumer | undefined;
  afterEach(async () => {
    await consumer?.stop();
    consumer = undefined;
  });

  /** Batch rows of these sizes, in one statement, so the consumer finds them all at once. */
  const publish = async (...sizes: number[]) => {
    let n = 0;
    const rows = sizes.map((size) => {
      const events = Array.from({ length: size }, () => ({ n: n++ }));
      return { events: JSON.stringify(events), event_count: size };
    });
    await db('usage_bus_batches').insert(rows);
    return n;
  };

  /** Starts a consumer; resolves with what each transaction was handed once `total` messages came. */
  const consume = async (batchSize: number, total: number) => {
    const transactions: UsageBusMessage[][] = [];
    consumer = createPostgresUsageConsumer({ db, connectionString: scratch.url, logger, batchSize, pollMs: 100 });
    await consumer.start(async (_trx, messages) => {
      transactions.push(messages);
      return { applied: messages.length, appliedEventIds: [], duplicates: 0, deadLetters: [] };
    });
    await waitFor(`${total} messages`, async () => transactions.flat().length >= total);
    return transactions;
  };

  it('when batches wait then each transaction takes whole batches, oldest first, up to the event limit', async () => {
    const total = await publish(3, 3, 3);
    const transactions = await consume(5, total);
    // 3 + 3 reaches the limit of 5 only with the second batch: a batch is never split.
    expect(transactions.map((t) => t.length)).toEqual([6, 3]);
    expect(transactions.flat().map((m) => (m.value as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8]);
    expect(transactions[0]![0]!.ref).toMatch(/^usage_bus_batches#\d+\/0$/);
    await waitFor('bus empty', async () => Number((await db('usage_bus_batches').count<{ n: string }>({ n: '*' }).first())?.n) === 0);
  });

  it('when a batch is bigger than the event limit then it goes alone, whole', async () => {
    const total = await publish(7, 1);
    const transactions = await consume(5, total);
    expect(transactions.map((t) => t.length)).toEqual([7, 1]);
  });

  it('when traffic was light (a batch per call) then a transaction takes at most 200 of them', async () => {
    const total = await publish(...Array.from({ length: 250 }, () => 1));
    const transactions = await consume(2_000, total);
    expect(transactions.map((t) => t.length)).toEqual([200, 50]);
  });

  it('when the sink publishes then its wake-up reaches an idle consumer, long before the consumer would poll', async () => {
    const handed: UsageBusMessage[] = [];
    consumer = createPostgresUsageConsumer({ db, connectionString: scratch.url, logger, pollMs: 600_000 });
    await consumer.start(async (_trx, messages) => {
      handed.push(...messages);
      return { applied: messages.length, appliedEventIds: [], duplicates: 0, deadLetters: [] };
    });
    // Let the first claim find the bus empty, so the loop sleeps until it is woken.
    await new Promise((r) => setTimeout(r, 300));
    const sink = createPostgresUsageSink(db, { logger });
    const event = { v: 1 as const, eventId: newRequestId(), organizationId: 'org_waker', keyId: 'key_waker', source: 'api' as const, product: 'company-report', quantity: 1, unit: 'calls' as const, occurredAt: new Date().toISOString() };
    const started = Date.now();
    await sink.publish(event);
    await waitFor('the event handed to the consumer', async () => handed.length > 0, 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(handed.map((m) => m.value)).toEqual([event]);
    await sink.close();
  });

  it('when the database refuses connections for a while then the worker says once, in its own words, that it cannot reach it and events wait on the bus, and once that it consumes again', async () => {
    const proxy = await startTcpProxy(hostAndPort(scratch.url));
    const lines: { level: string; msg: string; dependency?: string; cause?: string }[] = [];
    const viaProxy = createDb({ connectionString: proxy.urlFor(scratch.url), poolMax: 2, applicationName: 'usage-consumer-outage-test' });
    try {
      const handed: UsageBusMessage[] = [];
      consumer = createPostgresUsageConsumer({
        db: viaProxy,
        connectionString: scratch.url,
        logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line)) }),
        pollMs: 100,
      });
      await consumer.start(async (_trx, messages) => {
        handed.push(...messages);
        return { applied: messages.length, appliedEventIds: [], duplicates: 0, deadLetters: [] };
      });
      proxy.cut();
      // Several retries' worth (backing off from 200 ms to 5 s) of a database that refuses.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      const total = await publish(3);
      proxy.restore();
      // And the line that says so: the consumer writes it once the batch has committed, after
      // handing it over (CI read the lines in between).
      await waitFor('the events handed over, and the recovery said', async () => handed.length >= total && lines.some((l) => l.msg.startsWith('the billing worker reaches the database again')), 30_000);
      const said = lines.filter((l) => /^the billing worker (cannot reach|reaches) the database/.test(l.msg));
      expect(said.map((l) => [l.level, l.msg]), JSON.stringify(lines.slice(-10))).toEqual([
        ['warn', 'the billing worker cannot reach the database: usage events stay on the Postgres bus, nothing is billed meanwhile, and it retries until the database answers'],
        ['info', 'the billing worker reaches the database again: consuming usage events'],
      ]);
      expect(said[0]).toMatchObject({ dependency: 'database', cause: expect.stringMatching(/database/) });
      expect(lines.filter((l) => l.msg === 'usage batch failed; it stays on the bus')).toEqual([]);
    } finally {
      await consumer?.stop();
      consumer = undefined;
      await viaProxy.destroy();
      await proxy.close();
    }
  });
});
