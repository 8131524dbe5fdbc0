import type { Knex } from 'knex';
import { createNotificationListener, type NotificationListener } from '../db/notification-listener.js';
import type { Logger } from '../logging/index.js';
import type { ApplyUsageBatch, UsageBusConsumer, UsageBusMessage } from './usage-bus.js';

export interface PostgresUsageConsumerOptions {
  db: Knex;
  /** For the LISTEN connection (outside the pool). */
  connectionString: string;
  logger: Logger;
  /** Rows claimed per transaction. */
  batchSize?: number;
  /** Claim loops run side by side; SKIP LOCKED gives each its own rows. */
  concurrency?: number;
  /** The backstop when a notification is missed (listener reconnecting). */
  pollMs?: number;
}

// SQLSTATE classes of a message's own fault (bad data, constraint): retrying will not help.
const isDataError = (err: unknown) => /^(22|23)/.test(String((err as { code?: unknown } | null)?.code ?? ''));

/**
 * The Postgres usage bus, consuming side. Each loop claims the oldest rows with
 * FOR UPDATE SKIP LOCKED and DELETEs them in the same transaction that applies them, so a
 * row leaves the bus exactly when its ledger rows commit. LISTEN usage_bus wakes the loops
 * as soon as the API inserts; polling covers a lost connection.
 */
export function createPostgresUsageConsumer(options: PostgresUsageConsumerOptions): UsageBusConsumer {
  const { db, logger } = options;
  const batchSize = options.batchSize ?? 2_000;
  const concurrency = options.concurrency ?? 1;
  const pollMs = options.pollMs ?? 1_000;
  let running = false;
  let listener: NotificationListener | undefined;
  let loops: Promise<void>[] = [];
  const sleepers = new Set<() => void>();
  const stoppers = new Set<() => void>();
  let notified = 0;

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

  const claimAndApply = (apply: ApplyUsageBatch, limit: number) =>
    db.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: { seq: number; payload: object }[] }>(
        `DELETE FROM usage_bus_events
          WHERE seq IN (SELECT seq FROM usage_bus_events ORDER BY seq LIMIT ? FOR UPDATE SKIP LOCKED)
          RETURNING seq, payload`,
        [limit],
      );
      if (rows.length === 0) return 0;
      rows.sort((a, b) => a.seq - b.seq);
      const messages: UsageBusMessage[] = rows.map((r) => ({ value: r.payload, ref: `usage_bus_events#${r.seq}` }));
      await apply(trx, messages);
      return rows.length;
    });

  // A row whose application fails on its own data (not a failing database) would come back
  // for ever: after repeated failures we take rows one by one and dead-letter the culprit.
  const deadLetterOldest = (reason: string) =>
    db.transaction(async (trx) => {
      const { rows } = await trx.raw<{ rows: { seq: number; payload: object }[] }>(
        `DELETE FROM usage_bus_events
          WHERE seq = (SELECT seq FROM usage_bus_events ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
          RETURNING seq, payload`,
      );
      for (const row of rows) {
        await trx('usage_dead_letters').insert({ bus: 'postgres', payload: JSON.stringify(row.payload), reason: `${reason} (usage_bus_events#${row.seq})` });
      }
    });

  const loop = async (apply: ApplyUsageBatch) => {
    let failures = 0;
    while (running) {
      const seen = notified;
      const limit = failures >= 3 ? 1 : batchSize;
      try {
        const claimed = await claimAndApply(apply, limit);
        failures = 0;
        if (claimed < limit) await sleep(pollMs, seen);
      } catch (err) {
        failures += 1;
        logger.error('usage batch failed; it stays on the bus', { err, failures });
        if (limit === 1 && isDataError(err)) {
          await deadLetterOldest(`apply failed: ${(err as Error).message}`).catch((e: unknown) => logger.error('could not dead-letter', { err: e }));
          failures = 0;
          continue;
        }
        await sleep(Math.min(100 * 2 ** failures, 5_000), null);
      }
    }
  };

  return {
    bus: 'postgres',
    async start(apply) {
      if (running) throw new Error('consumer already started');
      running = true;
      listener = createNotificationListener({ connectionString: options.connectionString, logger });
      listener.subscribe('usage_bus', wakeAll);
      // After a reconnect, notifications sent while we were blind are lost: look now.
      listener.onConnectionChange((connected) => {
        if (connected) wakeAll();
      });
      loops = Array.from({ length: concurrency }, () => loop(apply));
    },
    async stop() {
      running = false;
      for (const wake of [...sleepers, ...stoppers]) wake();
      await Promise.all(loops);
      await listener?.close();
    },
  };
}
