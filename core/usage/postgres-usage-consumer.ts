import type { Knex } from 'knex';
import { databaseUnavailableReason } from '../db/database-error.js';
import { createNotificationListener, type NotificationListener } from '../db/notification-listener.js';
import type { Logger } from '../logging/index.js';
import { applyOneByOne, isDataError } from './apply-one-by-one.js';
import { createBatchesInFlight } from './batches-in-flight.js';
import { describeError, isCodeFault, UsageConsumerFailure } from './consumer-failure.js';
import type { ApplyUsageBatch, UsageBacklog, UsageBusConsumer, UsageBusMessage } from './usage-bus.js';

export interface PostgresUsageConsumerOptions {
  db: Knex;
  /** For the LISTEN connection (outside the pool). */
  connectionString: string;
  logger: Logger;
  /** Events applied per transaction, at most (a published batch is never split, so one
   * bigger than this goes alone). */
  batchSize?: number;
  /** Claim loops run side by side; SKIP LOCKED gives each its own rows. */
  concurrency?: number;
  /** The backstop when a notification is missed (listener reconnecting). */
  pollMs?: number;
}

interface BatchRow {
  seq: number;
  /** The published JSON array, parsed by pg; anything else is carried as one message. */
  events: unknown;
}

/** A row's events as bus messages, in publishing order. */
export function batchMessages(row: BatchRow): UsageBusMessage[] {
  const values = (Array.isArray(row.events) ? row.events : [row.events]) as UsageBusMessage['value'][];
  return values.map((value, i) => ({ value, ref: `usage_bus_batches#${row.seq}/${i}` }));
}

// The oldest rows not held by another loop, as many as make up to `events` events (at least
// one row). Rows locked but not taken are released at commit: they were skipped, not lost, but
// each lock is a tuple write, and rows locked here are invisible to the other loops, so at most
// MAX_ROWS_LOCKED are looked at: 200 rows are 200 events when traffic is light (a batch per
// call) and up to the whole `events` when it is heavy.
const MAX_ROWS_LOCKED = 200;
const CLAIM_ROWS = `
  WITH locked AS (
    SELECT seq, event_count FROM usage_bus_batches ORDER BY seq LIMIT least(?::int, ${MAX_ROWS_LOCKED}) FOR UPDATE SKIP LOCKED
  ), taken AS (
    SELECT seq FROM (SELECT seq, sum(event_count) OVER (ORDER BY seq) - event_count AS before FROM locked) l
     WHERE before < ?
  )
  DELETE FROM usage_bus_batches b USING taken WHERE b.seq = taken.seq
  RETURNING b.seq, b.events`;

// What waits, rows being applied included (they leave when their transaction commits). The
// table holds a few rows while the workers keep up; it is long only when they do not.
const BACKLOG = `SELECT count(*)::int AS batches, coalesce(sum(event_count), 0)::bigint AS events, min(enqueued_at) AS oldest FROM usage_bus_batches`;

/**
 * The Postgres usage bus, consuming side. Each loop claims the oldest rows with
 * FOR UPDATE SKIP LOCKED and DELETEs them in the same transaction that applies them, so a
 * row leaves the bus exactly when its ledger rows commit. LISTEN usage_bus wakes the loops
 * when a publisher's batches land (consumer-waker.ts, within 10 ms); polling covers a lost
 * connection, and rows written by anything else.
 *
 * A loop retries a failing batch for ever, with backoff, as long as the failure may pass (the
 * database away). A fault in the code (a TypeError, say) does not pass: retried, it would keep
 * the worker up and billing nothing. So, as kafkajs does on the Kafka bus, it ends consuming
 * for good (`failed`), and so does anything else that ends a loop while it should run.
 */
export function createPostgresUsageConsumer(options: PostgresUsageConsumerOptions): UsageBusConsumer {
  const { db, logger } = options;
  const batchSize = options.batchSize ?? 2_000;
  const concurrency = options.concurrency ?? 1;
  const pollMs = options.pollMs ?? 1_000;
  let running = false;
  let started = false;
  let failure: UsageConsumerFailure | undefined;
  let fail!: (failure: UsageConsumerFailure) => void;
  const failed = new Promise<UsageConsumerFailure>((resolve) => (fail = resolve));
  // Loops whose claim failed since the last one that committed: while any, it is `retrying`.
  const failing = new Set<number>();
  // Whether the database failure of a claim has been said and its end not yet.
  let unreachable = false;
  let backlog: Promise<UsageBacklog> | undefined;
  let listener: NotificationListener | undefined;
  let loops: Promise<void>[] = [];
  const sleepers = new Set<() => void>();
  const stoppers = new Set<() => void>();
  let notified = 0;
  const inFlight = createBatchesInFlight();

  const wakeAll = () => {
    notified += 1;
    for (const wake of sleepers) wake();
  };

  // Until a notification newer than `seen` (null: only stop() wakes it early), or `ms`.
  const sleep = (ms: number, seen: number | null) =>
    new Promise<void>((resolve) => {
      if (!running || (seen !== null && notified !== seen)) return resolve();
      const done = () => {
        clearTimeout(timer);
        sleepers.delete(done);
        stoppers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (seen !== null) sleepers.add(done);
      else stoppers.add(done);
    });

  const claimAndApply = (apply: ApplyUsageBatch, events: number) =>
    inFlight.run(() =>
      db.transaction(async (trx) => {
        const { rows } = await trx.raw<{ rows: BatchRow[] }>(CLAIM_ROWS, [events, events]);
        if (rows.length === 0) return 0;
        rows.sort((a, b) => a.seq - b.seq);
        const messages = rows.flatMap(batchMessages);
        await apply(trx, messages);
        return messages.length;
      }),
    );

  // A batch whose application fails on its own data (not a failing database) would come back
  // for ever: after repeated failures the oldest batch is applied one event at a time.
  const applyOldestEventByEvent = (apply: ApplyUsageBatch) =>
    inFlight.run(() =>
      db.transaction(async (trx) => {
        const { rows } = await trx.raw<{ rows: BatchRow[] }>(CLAIM_ROWS, [1, 1]);
        await applyOneByOne(trx, apply, rows.flatMap(batchMessages), 'postgres', logger);
      }),
    );

  const loop = async (apply: ApplyUsageBatch, id: number) => {
    let failures = 0;
    while (running) {
      const seen = notified;
      const limit = failures >= 3 ? 1 : batchSize;
      try {
        const claimed = await claimAndApply(apply, limit);
        failures = 0;
        // A claim that commits is the bus working again, whatever another loop met last.
        failing.clear();
        if (unreachable) {
          unreachable = false;
          logger.info('the billing worker reaches the database again: consuming usage events', { dependency: 'database' });
        }
        if (claimed < limit) await sleep(pollMs, seen);
      } catch (err) {
        if (isCodeFault(err)) throw err;
        // Stopping (a signal, or the billing worker ending on a stall whose line says why): the
        // batch stays on the bus for the next worker, not retried, and its error is no news (no
        // free connection, say, while the others wait on a database that stopped answering).
        if (!running) {
          logger.warn('usage batch failed while the consumer stopped; it stays on the bus', { err });
          return;
        }
        failures += 1;
        failing.add(id);
        const unavailable = databaseUnavailableReason(err);
        if (unavailable === undefined) {
          logger.error('usage batch failed; it stays on the bus', { err, failures });
        } else {
          // The database itself (the bus is in it): said as the Kafka consumer says it, once,
          // then once in a while, not at every retry of every loop, and once when it is back.
          unreachable = true;
          logger.warnRepeating('usage consumer outage', 'the billing worker cannot reach the database: usage events stay on the Postgres bus, nothing is billed meanwhile, and it retries until the database answers', {
            dependency: 'database',
            cause: unavailable,
          });
        }
        if (limit === 1 && isDataError(err)) {
          await applyOldestEventByEvent(apply).catch((e: unknown) => {
            if (isCodeFault(e)) throw e;
            logger.error('could not apply the failing batch event by event', { err: e });
          });
          failures = 0;
          continue;
        }
        await sleep(Math.min(100 * 2 ** failures, 5_000), null);
      }
    }
  };

  // A loop that ended while it should run: the others stop after their batch in flight, and
  // `failed` says why. The listener stays for stop() to close, as the loops' promises do.
  const end = (err: unknown) => {
    if (!running) {
      logger.error('a usage claim loop failed while stopping', { err });
      return;
    }
    running = false;
    for (const wake of [...sleepers, ...stoppers]) wake();
    failure = new UsageConsumerFailure(`a claim loop of the Postgres usage bus ended on an error it does not retry (${describeError(err)})`, { cause: err });
    fail(failure);
  };

  const readBacklog = async (): Promise<UsageBacklog> => {
    const { rows } = await db.raw<{ rows: { batches: number; events: number | string; oldest: Date | null }[] }>(BACKLOG);
    const row = rows[0]!;
    return { events: Number(row.events), batches: row.batches, oldestEnqueuedAt: row.oldest?.toISOString() ?? null };
  };

  return {
    bus: 'postgres',
    async start(apply) {
      if (running) throw new Error('consumer already started');
      started = true;
      running = true;
      listener = createNotificationListener({ connectionString: options.connectionString, logger });
      listener.subscribe('usage_bus', wakeAll);
      // After a reconnect, notifications sent while we were blind are lost: look now.
      listener.onConnectionChange((connected) => {
        if (connected) wakeAll();
      });
      loops = Array.from({ length: concurrency }, (_, id) => loop(apply, id).catch(end));
    },
    async stop() {
      running = false;
      for (const wake of [...sleepers, ...stoppers]) wake();
      await Promise.all(loops);
      await listener?.close();
    },
    failed,
    state() {
      if (failure) return 'failed';
      if (!started) return 'starting';
      if (!running) return 'stopped';
      return failing.size > 0 ? 'retrying' : 'consuming';
    },
    backlog() {
      // One count at a time, however many probes ask while it runs (a long table, a slow database).
      backlog ??= readBacklog().finally(() => {
        backlog = undefined;
      });
      return backlog;
    },
    batchInFlight: () => inFlight.oldest(),
  };
}
