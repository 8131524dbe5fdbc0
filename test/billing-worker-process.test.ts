// The billing worker run alone, as production runs it (here from its source, through tsx): its
// /healthz on BILLING_WORKER_PORT, and its end when its consumer stops for good. Before,
// it served no port at all (nobody could tell a stuck worker from a healthy one), and a Kafka
// consumer that kafkajs would not restart left the process up, billing nothing, for ever.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Kafka } from 'kafkajs';
import type { Knex } from 'knex';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { createKafka, createKafkaUsageSink } from '../adapters/kafka/index.js';
import { createDb, migrateLatest } from '../core/db/index.js';
import { errorEnvelopeSchema } from '../core/errors/index.js';
import { newId } from '../core/ids/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageSink, type UsageSink } from '../core/usage/index.js';
import { allowanceOf, createBillingOrg, ledgerCount, usageEvent, waitFor } from './billing-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { kafkaBrokers, topicsWithADeadLetterLimit, topicsWithAnUnrestartableCrash } from './support/kafka.js';
import { runCli } from './support/run-cli.js';
import { hostAndPort, startTcpProxy, type TcpProxy } from './support/tcp-proxy.js';
import { killChildren } from './support/child-processes.js';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const logger = createLogger({ level: 'silent' });

interface Health {
  status: number;
  body: {
    status: 'ok' | 'unavailable';
    checks?: { database: string; consumer: string };
    batchInFlightSince?: string;
    bus: string;
    backlog: { events: number; batches?: number; oldestEnqueuedAt?: string | null } | null;
    lastBatchAt: string | null;
  };
}


const running: ChildProcess[] = [];
let dataDir: string;

interface Spawned {
  child: ChildProcess;
  /** Everything it wrote so far, stdout and stderr. */
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** The compiled worker, as the compose file runs it. */
function spawnWorker(env: Record<string, string>): Spawned {
  const child = spawn(process.execPath, ['--import', 'tsx', 'billing-worker/main.ts'], {
    cwd: repoRoot,
    env: { ...process.env, KAFKA_BROKERS: '', REDIS_URL: '', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', BILLING_WORKER_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  return { child, output: () => output, exited };
}

/** spawnWorker, resolving once it says where its /healthz listens. */
async function startWorker(env: Record<string, string>): Promise<Worker> {
  const spawned = spawnWorker(env);
  const listening = () => spawned.output().split('\n').find((l) => l.includes('"billing worker health listening"'));
  const gone = spawned.exited.then(() => undefined);
  for (;;) {
    const line = listening();
    if (line) return { ...spawned, healthUrl: (JSON.parse(line) as { url: string }).url };
    const ended = await Promise.race([gone.then(() => true), new Promise<false>((resolve) => setTimeout(() => resolve(false), 50))]);
    if (ended && !listening()) throw new Error(`the billing worker exited before listening:\n${spawned.output().slice(-3000)}`);
  }
}

interface Worker extends Spawned {
  healthUrl: string;
}

async function health(worker: Worker): Promise<Health> {
  const response = await fetch(worker.healthUrl, { signal: AbortSignal.timeout(10_000) });
  return { status: response.status, body: (await response.json()) as Health['body'] };
}

/** Asks /healthz until `wanted` holds; the last answer either way. */
async function healthWhen(worker: Worker, wanted: (h: Health) => boolean, timeoutMs = 30_000): Promise<Health> {
  const until = Date.now() + timeoutMs;
  let last = await health(worker);
  while (!wanted(last) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    last = await health(worker);
  }
  return last;
}

/** The `msg` of every JSON log line at level error. */
function errorsIn(output: string): string[] {
  return output.split('\n').flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { level?: unknown; msg?: unknown; service?: unknown };
      return entry.level === 'error' ? [String(entry.msg)] : [];
    } catch {
      return [];
    }
  });
}

/** The first `count` messages of `topic` (key, value and headers as text), read by a fresh group; then any that followed within a second. */
async function readMessages(kafka: Kafka, topic: string, count: number): Promise<{ key: string; value: string; headers: Record<string, string> }[]> {
  const reader = kafka.consumer({ groupId: `reader-${randomUUID()}` });
  const read: { key: string; value: string; headers: Record<string, string> }[] = [];
  await reader.connect();
  try {
    await reader.subscribe({ topic, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]));
        read.push({ key: message.key?.toString() ?? '', value: message.value?.toString() ?? '', headers });
      },
    });
    await waitFor(`${count} message(s) on ${topic}`, async () => read.length >= count, 45_000);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  } finally {
    await reader.disconnect();
  }
  return read;
}

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'billing-worker-process-'));
});
afterEach(() => killChildren(running));
afterAll(async () => {
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

/** A worker's variables for a bus, and a sink publishing where that worker reads. */
interface BusUse {
  env: Record<string, string>;
  sink(): UsageSink;
}

describe.each(['postgres', 'kafka'] as const)('the billing worker on the %s bus', (name) => {
  // The Postgres bus consumer takes every row of usage_bus_batches: a database of its own.
  let scratch: ScratchDatabase;
  let db: Knex;
  const sinks: UsageSink[] = [];
  beforeAll(async () => {
    scratch = await createScratchDatabase(`worker_${name}`);
    db = createDb({ connectionString: scratch.url, poolMax: 4, applicationName: 'billing-worker-process-test' });
    await migrateLatest(db);
  });
  afterAll(async () => {
    for (const sink of sinks) await sink.close();
    await db?.destroy();
    await scratch?.drop();
  });

  // Kafka: a topic and a group per test, so that a worker killed by the test before does not
  // hold up the next one's join until its session times out.
  const bus = (): BusUse => {
    const made = (sink: UsageSink) => {
      sinks.push(sink);
      return sink;
    };
    if (name === 'postgres') return { env: { DATABASE_URL: scratch.url }, sink: () => made(createPostgresUsageSink(db, { logger })) };
    const suffix = randomUUID().slice(0, 8);
    const topic = `usage-events-worker-${suffix}`;
    return {
      env: {
        DATABASE_URL: scratch.url,
        KAFKA_BROKERS: kafkaBrokers().join(','),
        KAFKA_USAGE_TOPIC: topic,
        KAFKA_DEAD_LETTER_TOPIC: `${topic}-dlq`,
        KAFKA_CONSUMER_GROUP: `worker-${suffix}`,
        KAFKA_PARTITIONS: '2',
      },
      sink: () => made(createKafkaUsageSink({ kafka: createKafka({ brokers: kafkaBrokers(), clientId: 'worker-process-test', logger }), topic, partitions: 2, logger })),
    };
  };

  it('when events wait behind a batch being applied then /healthz answers 200 with them as the backlog, and once they are applied the backlog is 0 with the time of the last batch', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const use = bus();
    const worker = await startWorker(use.env);
    // Kafka: once the consumer has joined its group.
    const idle = await healthWhen(worker, (h) => h.status === 200);
    expect(idle).toEqual({ status: 200, body: { status: 'ok', bus: name, backlog: expect.objectContaining({ events: 0 }), lastBatchAt: null, openDeadLetters: expect.any(Number) } });

    // The worker's batch waits for this lock on the organization's allowance, as it would
    // behind a slow top-up: the events are on the bus, not applied.
    const trx = await db.transaction();
    try {
      await trx('allowances').where({ organization_id: organizationId }).forUpdate().first();
      const usage = use.sink();
      await Promise.all(Array.from({ length: 5 }, () => usage.publish(usageEvent(organizationId))));
      const behind = await healthWhen(worker, (h) => h.body.backlog?.events === 5);
      expect(behind).toMatchObject({ status: 200, body: { status: 'ok', backlog: { events: 5 }, lastBatchAt: null } });
      if (name === 'postgres') expect(behind.body.backlog).toMatchObject({ batches: expect.any(Number), oldestEnqueuedAt: expect.stringMatching(/^\d{4}-/) });
    } finally {
      await trx.commit();
    }
    const caughtUp = await healthWhen(worker, (h) => h.body.backlog?.events === 0 && h.body.lastBatchAt !== null);
    expect(caughtUp).toMatchObject({ status: 200, body: { status: 'ok', backlog: { events: 0 }, lastBatchAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
    expect(await ledgerCount(db, organizationId)).toBe(5);
  });

  it('when batches cannot be applied then /healthz answers 503 naming the consumer, the database ok and the events waiting; once they can, 200 and a backlog of 0', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const use = bus();
    const worker = await startWorker(use.env);
    await healthWhen(worker, (h) => h.status === 200);
    // Every batch now fails on a missing table (a migration gone wrong): retried, never applied.
    await db.raw('ALTER TABLE usage_ledger RENAME TO usage_ledger_away');
    try {
      const usage = use.sink();
      await Promise.all(Array.from({ length: 3 }, () => usage.publish(usageEvent(organizationId))));
      const failing = await healthWhen(worker, (h) => h.status === 503 && h.body.backlog?.events === 3);
      expect(failing).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { database: 'ok', consumer: 'retrying' }, bus: name, backlog: { events: 3 } } });
    } finally {
      await db.raw('ALTER TABLE usage_ledger_away RENAME TO usage_ledger');
    }
    const recovered = await healthWhen(worker, (h) => h.status === 200 && h.body.backlog?.events === 0, 45_000);
    expect(recovered).toMatchObject({ status: 200, body: { status: 'ok', backlog: { events: 0 } } });
    expect(await ledgerCount(db, organizationId)).toBe(3);
  }, 90_000);

  it('when the database stops answering then /healthz answers 503 naming it within its deadline, and 200 once it answers again', async () => {
    const proxy: TcpProxy = await startTcpProxy(hostAndPort(scratch.url));
    try {
      const worker = await startWorker({ ...bus().env, DATABASE_URL: proxy.urlFor(scratch.url) });
      await healthWhen(worker, (h) => h.status === 200);
      proxy.cut();
      const began = Date.now();
      const down = await health(worker);
      expect(Date.now() - began).toBeLessThan(3_000);
      expect(down).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { database: 'unreachable' }, bus: name } });
      proxy.restore();
      expect(await healthWhen(worker, (h) => h.status === 200)).toMatchObject({ status: 200, body: { status: 'ok' } });
    } finally {
      await proxy.close();
    }
  });
});

describe('the billing worker on the kafka bus when its consumer stops for good', () => {
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    scratch = await createScratchDatabase('worker_fatal');
  });
  afterAll(async () => {
    await scratch?.drop();
  });

  it('when kafkajs will not restart its consumer then the worker logs one line saying why and exits 1, for its supervisor to restart it', async () => {
    // A realistic crash kafkajs does not restart from: a dead-letter topic configured too small
    // for any dead letter, even the truncated stand-in the consumer sends for one too large
    // (MESSAGE_TOO_LARGE is not retriable). The message itself is a poison message.
    const kafka = createKafka({ brokers: kafkaBrokers(), clientId: 'worker-fatal-test', logger });
    const { topic, deadLetterTopic, groupId, poison } = await topicsWithAnUnrestartableCrash(kafka, 'usage-events-fatal');
    await poison();

    const worker = spawnWorker({
      DATABASE_URL: scratch.url,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      KAFKA_USAGE_TOPIC: topic,
      KAFKA_DEAD_LETTER_TOPIC: deadLetterTopic,
      KAFKA_CONSUMER_GROUP: groupId,
    });
    const ended = await Promise.race([worker.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 45_000))]);
    const output = worker.output();
    expect(ended, output.slice(-3000)).toEqual({ code: 1, signal: null });
    const ours = errorsIn(output).filter((msg) => msg.startsWith('billing worker stopped consuming usage events'));
    expect(ours).toEqual([
      expect.stringMatching(
        /^billing worker stopped consuming usage events: the Kafka consumer crashed on an error kafkajs does not retry, and kafkajs will not restart it \(KafkaJSProtocolError: The request included a message larger than the max message size the server will accept\); nothing is billed until it runs again, so it exits with status 1 for its supervisor to restart it$/,
      ),
    ]);
    expect(output).not.toMatch(/Node\.js v\d/);
  }, 90_000);
});

describe('the billing worker on the kafka bus when a dead letter is larger than the dead-letter topic takes', () => {
  // A poison message near the usage topic's limit, or a dead-letter topic configured smaller:
  // before, its dead letter was refused (MESSAGE_TOO_LARGE), the consumer crashed for good, and
  // every restart crashed on it again, so that partition was never billed again.
  const poison = `not a usage event ${'x'.repeat(4_000)}`;
  const sha256 = createHash('sha256').update(poison).digest('hex');
  const kafka = () => createKafka({ brokers: kafkaBrokers(), clientId: 'worker-dead-letter-size-test', logger });
  const kafkaEnv = (topics: { topic: string; deadLetterTopic: string; groupId: string }, databaseUrl: string) => ({
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: kafkaBrokers().join(','),
    KAFKA_USAGE_TOPIC: topics.topic,
    KAFKA_DEAD_LETTER_TOPIC: topics.deadLetterTopic,
    KAFKA_CONSUMER_GROUP: topics.groupId,
  });
  const publish = async (client: Kafka, topic: string, values: string[]) => {
    const producer = client.producer();
    await producer.connect();
    try {
      await producer.send({ topic, messages: values.map((value) => ({ key: 'one-partition', value })) });
    } finally {
      await producer.disconnect();
    }
  };
  const logEntries = (output: string) => output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });

  let scratch: ScratchDatabase;
  let db: Knex;
  beforeAll(async () => {
    scratch = await createScratchDatabase('worker_dead_letter_size');
    db = createDb({ connectionString: scratch.url, poolMax: 2, applicationName: 'billing-worker-process-test' });
    await migrateLatest(db);
  });
  afterAll(async () => {
    await db?.destroy();
    await scratch?.drop();
  });

  it('when a poison message\'s dead letter is larger than the dead-letter topic takes then a truncated stand-in goes there, the worker keeps consuming and the messages after it are billed once', async () => {
    const client = kafka();
    const topics = await topicsWithADeadLetterLimit(client, 'usage-events-big-dlq', 1024);
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    await publish(client, topics.topic, [JSON.stringify(usageEvent(organizationId)), poison]);
    const worker = await startWorker(kafkaEnv(topics, scratch.url));

    const source = `${topics.topic}/0@1`;
    const [letter, ...more] = await readMessages(client, topics.deadLetterTopic, 1);
    expect(more).toEqual([]);
    expect(letter).toEqual({
      key: source,
      value: poison.slice(0, 512),
      headers: { 'dead-letter-reason': 'not JSON', 'dead-letter-source': source, 'dead-letter-truncated': String(poison.length), 'dead-letter-sha256': sha256 },
    });

    // Published once the poison message was passed over: billed only by a consumer still running.
    await publish(client, topics.topic, [usageEvent(organizationId), usageEvent(organizationId)].map((e) => JSON.stringify(e)));
    const caughtUp = await healthWhen(worker, (h) => h.status === 200 && h.body.backlog?.events === 0 && h.body.lastBatchAt !== null, 60_000);
    await waitFor('three ledger rows', async () => (await ledgerCount(db, organizationId)) === 3, 30_000);
    expect(caughtUp, worker.output().slice(-3000)).toMatchObject({ status: 200, body: { status: 'ok', backlog: { events: 0 } } });
    expect(worker.child.exitCode).toBeNull();
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(1_000 - 15);
    const admin = client.admin();
    await admin.connect();
    try {
      const [committed] = await admin.fetchOffsets({ groupId: topics.groupId, topics: [topics.topic] });
      expect(committed?.partitions).toEqual([expect.objectContaining({ partition: 0, offset: '4' })]);
      expect(await admin.fetchTopicOffsets(topics.deadLetterTopic)).toEqual([expect.objectContaining({ partition: 0, high: '1' })]);
    } finally {
      await admin.disconnect();
    }
    expect(await db('usage_dead_letters').pluck('payload')).toEqual([poison]);

    // Counted once (the worker's deadLetters stat is counted with this line), and said truncated.
    const entries = logEntries(worker.output());
    expect(entries.filter((e) => e.msg === 'usage message dead-lettered')).toEqual([expect.objectContaining({ level: 'warn', ref: source, reason: 'not JSON' })]);
    expect(entries.filter((e) => String(e.msg).startsWith('usage dead letter truncated'))).toEqual([
      expect.objectContaining({ level: 'warn', ref: source, topic: topics.deadLetterTopic, bytes: poison.length, kept: 512, sha256 }),
    ]);
    expect(errorsIn(worker.output())).toEqual([]);
  }, 120_000);

  it('when dead letters are replayed, one whose copy on the dead-letter topic was truncated is read whole from its row: it is reported still failing and the others are charged', async () => {
    // A database of its own: --all replays every open dead letter.
    const own = await createScratchDatabase('worker_dead_letter_replay');
    const ownDb = createDb({ connectionString: own.url, poolMax: 2, applicationName: 'billing-worker-process-test' });
    try {
      await migrateLatest(ownDb);
      const client = kafka();
      // Too small for the poison message's stand-in with 512 bytes of it, not for the one with
      // none, nor for the other dead letter whole: they are refused together, then sent one by one.
      const topics = await topicsWithADeadLetterLimit(client, 'usage-events-replay-dlq', 640);
      const late = newId('org');
      const early = usageEvent(late); // its organization does not exist yet
      await publish(client, topics.topic, [JSON.stringify(early), poison]);
      const worker = await startWorker(kafkaEnv(topics, own.url));
      const letters = await readMessages(client, topics.deadLetterTopic, 2);
      // The batch's parse failures come first, then its events for no known organization.
      expect(letters).toEqual([
        { key: `${topics.topic}/0@1`, value: '', headers: expect.objectContaining({ 'dead-letter-truncated': String(poison.length), 'dead-letter-sha256': sha256 }) },
        { key: `${topics.topic}/0@0`, value: JSON.stringify(early), headers: { 'dead-letter-reason': `unknown organization ${late}`, 'dead-letter-source': `${topics.topic}/0@0` } },
      ]);
      expect((await healthWhen(worker, (h) => h.status === 200 && h.body.backlog?.events === 0)).status).toBe(200);

      await createBillingOrg(ownDb, { organizationId: late, credits: 1_000 });
      const rows = await ownDb('usage_dead_letters').orderBy('id').select<{ id: number; payload: string }[]>('id', 'payload');
      expect(rows.map((r) => r.payload)).toEqual([poison, JSON.stringify(early)]);
      const replay = await runCli(own.url, 'billing', 'replay-dead-letters', '--all');
      expect(replay.code, replay.stderr).toBe(1);
      expect(replay.stdout.trim().split('\n')).toEqual([`#${rows[1]!.id} charged ${early.eventId}`, '1 charged, 0 already charged, 1 still failing, 0 not open']);
      expect(replay.stderr.trim().split('\n')).toEqual([`#${rows[0]!.id} still failing: not JSON`]);
      expect((await allowanceOf(ownDb, late))?.credits_balance).toBe(1_000 - 5);
      expect(await ownDb('usage_dead_letters').whereNull('resolved_at').pluck('payload')).toEqual([poison]);
    } finally {
      await ownDb.destroy();
      await own.drop();
    }
  }, 120_000);
});

describe('the billing worker when a batch waits on a database connection that stopped answering', () => {
  // Small, so the test is quick; the default is two minutes.
  const STALL_MS = 2_000;
  // billing-worker/main.ts's FAILED_EXIT_MS: how long it gives a stop before it exits anyway.
  const FAILED_EXIT_MS = 10_000;
  let scratch: ScratchDatabase;
  let db: Knex;
  let proxy: TcpProxy | undefined;
  let usage: UsageSink | undefined;
  beforeAll(async () => {
    scratch = await createScratchDatabase('worker_stall');
    db = createDb({ connectionString: scratch.url, poolMax: 4, applicationName: 'billing-worker-stall-test' });
    await migrateLatest(db);
  });
  afterAll(async () => {
    await usage?.close();
    await proxy?.close();
    await db?.destroy();
    await scratch?.drop();
  });

  /** The billing workers' sessions on the scratch database (pg_stat_activity), by state. */
  const workerSessions = async () => {
    const { rows } = await db.raw<{ rows: { state: string; wait_event_type: string | null }[] }>(
      "SELECT state, wait_event_type FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'billing-worker'",
    );
    return rows;
  };

  /**
   * A worker behind a TCP relay that has applied one batch, and whose next batch is claimed and
   * then waits for a lock on the allowance, as behind a slow top-up; the relay freezes meanwhile,
   * so the rows the lock lets it read never arrive.
   */
  async function workerWithAStalledBatch() {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    usage ??= createPostgresUsageSink(db, { logger });
    await proxy?.close();
    proxy = await startTcpProxy(hostAndPort(scratch.url));
    const worker = await startWorker({ DATABASE_URL: proxy.urlFor(scratch.url), BILLING_BATCH_STALL_MS: String(STALL_MS) });
    await usage.publish(usageEvent(organizationId));
    await healthWhen(worker, (h) => h.status === 200 && h.body.lastBatchAt !== null);
    const trx = await db.transaction();
    try {
      await trx('allowances').where({ organization_id: organizationId }).forUpdate().first();
      await Promise.all(Array.from({ length: 3 }, () => usage!.publish(usageEvent(organizationId))));
      await waitFor('the worker\'s batch waiting for the allowance lock', async () => (await workerSessions()).some((s) => s.wait_event_type === 'Lock'));
      proxy.freeze();
    } finally {
      await trx.commit();
    }
    return { worker, organizationId, frozeAt: Date.now() };
  }

  it('when its batch waits on a half-open connection then /healthz answers 503 `stalled` saying since when, one line says why and it exits 1; Postgres ends the dead session, and a new worker applies the batch once', async () => {
    const { worker, organizationId, frozeAt } = await workerWithAStalledBatch();

    const stalled = await healthWhen(worker, (h) => h.body.checks?.consumer === 'stalled');
    expect(stalled, worker.output().slice(-3000)).toMatchObject({
      status: 503,
      body: { status: 'unavailable', checks: { consumer: 'stalled' }, batchInFlightSince: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), bus: 'postgres' },
    });
    expect(Date.parse(stalled.body.batchInFlightSince!)).toBeLessThanOrEqual(frozeAt);
    // Its stop cannot drain the stalled batch: it exits when main.ts stops waiting for it.
    const ended = await Promise.race([worker.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), STALL_MS + FAILED_EXIT_MS + 20_000))]);
    expect(ended, worker.output().slice(-3000)).toEqual({ code: 1, signal: null });
    // A rollover sweep that began before the stall may fail on the frozen pool too: its own line.
    const errors = errorsIn(worker.output()).filter((msg) => !msg.startsWith('rollover sweep failed'));
    expect(errors, worker.output().slice(-3000)).toEqual([
      expect.stringMatching(
        /^billing worker stopped consuming usage events: a usage batch has been in flight \d+ s \(BILLING_BATCH_STALL_MS allows 2 s\): likely a database connection that stopped answering; nothing is billed until it runs again, so it exits with status 1 for its supervisor to restart it$/,
      ),
    ]);

    // The proxy still holds the dead worker's connections open, as a dead network path would:
    // Postgres itself ends its session, idle in the batch's transaction, and with it the locks on
    // the allowance and on the claimed rows of the bus.
    await waitFor('the stalled session ended by Postgres', async () => (await workerSessions()).every((s) => !s.state.startsWith('idle in transaction')), 20_000);
    expect(await ledgerCount(db, organizationId)).toBe(1);

    // Redelivered to a new worker (its supervisor's restart), the batch is charged once.
    const fresh = await startWorker({ DATABASE_URL: scratch.url, BILLING_BATCH_STALL_MS: String(STALL_MS) });
    const caughtUp = await healthWhen(fresh, (h) => h.status === 200 && h.body.backlog?.events === 0 && h.body.lastBatchAt !== null);
    expect(caughtUp).toMatchObject({ status: 200, body: { status: 'ok', backlog: { events: 0 } } });
    expect(await ledgerCount(db, organizationId)).toBe(4);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(1_000 - 4 * 5);
  }, 120_000);

  it('when it is sent SIGTERM while a batch is stalled then the stop does not wait for ever: the stall is said and it exits 1', async () => {
    const { worker } = await workerWithAStalledBatch();
    // Before the stall limit: the signal's stop waits to drain the batch, which cannot drain.
    worker.child.kill('SIGTERM');
    const ended = await Promise.race([worker.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), STALL_MS + FAILED_EXIT_MS + 20_000))]);
    expect(ended, worker.output().slice(-3000)).toEqual({ code: 1, signal: null });
    const errors = errorsIn(worker.output()).filter((msg) => !msg.startsWith('rollover sweep failed'));
    expect(errors, worker.output().slice(-3000)).toEqual([expect.stringMatching(/^billing worker stopped consuming usage events: a usage batch has been in flight \d+ s \(BILLING_BATCH_STALL_MS allows 2 s\)/)]);
  }, 120_000);
});

describe('the billing worker\'s HTTP port', () => {
  let scratch: ScratchDatabase;
  beforeAll(async () => {
    scratch = await createScratchDatabase('worker_http');
  });
  afterAll(async () => {
    await scratch?.drop();
  });

  it('when asked anything but GET /healthz then it answers unknown_endpoint in the error envelope (405 with Allow for another method)', async () => {
    const worker = await startWorker({ DATABASE_URL: scratch.url });
    const base = new URL(worker.healthUrl).origin;
    const unknown = await fetch(`${base}/companies/x`);
    expect(unknown.status).toBe(404);
    const body = errorEnvelopeSchema.parse(await unknown.json());
    expect(body.error.code).toBe('unknown_endpoint');
    expect(unknown.headers.get('x-request-id')).toBe(body.error.requestId);
    const wrongMethod = await fetch(worker.healthUrl, { method: 'POST' });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET, HEAD');
    expect(errorEnvelopeSchema.parse(await wrongMethod.json()).error).toMatchObject({ code: 'unknown_endpoint', message: 'This path only answers GET and HEAD.' });
    const head = await fetch(worker.healthUrl, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('when sent SIGTERM then the worker drains, closes its port and exits 0', async () => {
    const worker = await startWorker({ DATABASE_URL: scratch.url });
    expect((await health(worker)).status).toBe(200);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect(worker.output()).toContain('"msg":"billing worker stopped"');
    await expect(fetch(worker.healthUrl)).rejects.toThrow();
  });

  it('when BILLING_WORKER_PORT is taken then the worker names it, stops what it started and exits 1', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const worker = spawnWorker({ DATABASE_URL: scratch.url, BILLING_WORKER_PORT: String(port) });
      const ended = await worker.exited;
      const output = worker.output();
      expect(ended.code, output.slice(-3000)).toBe(1);
      expect(errorsIn(output)).toEqual([`could not start: BILLING_WORKER_PORT ${port} is already in use on 127.0.0.1: stop what listens there, or set BILLING_WORKER_PORT to a free port`]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('when docker-compose runs the worker then it sets BILLING_WORKER_PORT and checks /healthz on it, as it does the API\'s', () => {
    const compose = parse(readFileSync(path.join(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { environment?: Record<string, string>; healthcheck?: { test?: string[] } }>;
    };
    const worker = compose.services['billing-worker']!;
    const port = worker.environment?.BILLING_WORKER_PORT;
    expect(port).toMatch(/^\d+$/);
    expect(worker.healthcheck?.test).toEqual(['CMD', 'node', '-e', `fetch('http://127.0.0.1:${port}/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`]);
  });
});
