import { isDroppedConnection, type Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import type { Logger } from '../logging/index.js';
import { createBatchPublisher } from './batch-publisher.js';
import { createConsumerWaker } from './consumer-waker.js';
import { settleRefusedCalls, type RecordRefusedCalls } from './refused-calls.js';
import type { UsageEvent } from './usage-event.js';
import type { UsageSink } from './usage-sink.js';

export interface PostgresUsageSinkOptions {
  maxBatch?: number;
  lingerMs?: number;
  /** Batches being inserted at once, each on its own pooled connection. */
  maxInFlight?: number;
  /** At most one wake-up of the bus's consumers per this many ms (see consumer-waker.ts). */
  wakeIntervalMs?: number;
  /** How long a caller waits for its event's commit before it is refused (USAGE_PUBLISH_DEADLINE_MS). */
  deadlineMs?: number;
  /**
   * Records calls refused while their batch still committed afterwards, so those are not
   * charged, and refunds any already charged (core/billing's recordRefusedCalls); without it
   * they are only logged for refund.
   */
  recordRefused?: RecordRefusedCalls;
  /**
   * Where a failed wake-up is reported (at debug: the consumer's poll covers it), and events
   * that committed after their callers were refused (at warn when recorded as refused or
   * refunded; at error, to be refunded by hand, when that record failed). Required: those lines
   * are how a refused call that was charged all the same gets found.
   */
  logger: Logger;
}

/**
 * How long a call waits for its usage event to be durable, on either bus, before it is refused
 * (503, not charged): a database or broker that stalls must not hold calls open until their
 * clients give up, and then charge them.
 */
export const USAGE_PUBLISH_DEADLINE_MS = 10_000;

// What the sink needs of knex's pg client: a pooled connection that can run a named (prepared)
// statement, parsed and planned once per connection instead of once per batch.
interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
  /** The connection's backend, to cancel its statement from another connection. */
  processID: number | null;
}
interface PooledPgClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

// One row per batch (migration 010): the batch's JSON array, as one text parameter (one
// JSON.stringify of the batch), stored as it came. Per-event rows cost Postgres about twice the
// CPU per call (a jsonb parse, a tuple and two index entries each).
const insertBatch = {
  name: 'usage_bus_insert_batch',
  text: 'INSERT INTO usage_bus_batches (events, event_count) VALUES ($1::json, $2)',
};

// The consumers' wake-up, in a transaction of its own. Where NOTIFY takes a transaction id
// (PostgreSQL 15 does, 18 does not), that transaction's commit would wait for a WAL flush of its
// own: a lost wake-up is harmless, so it does not wait.
const WAKE_CONSUMERS = "SELECT pg_notify('usage_bus', ''), set_config('synchronous_commit', 'off', true)";

// A batch's INSERT still running at its callers' deadline (waiting for a lock, say) is
// cancelled, so it rolls back, and its callers are refused only then: never charged. From another
// connection, by backend pid: only while that backend still runs a bus INSERT, so a pid whose
// INSERT ended meanwhile cancels nothing, or at worst another batch, whose callers are refused
// and not charged. Where the server itself stalls, the cancel waits with it, and a batch that
// commits late is recorded as refused in the ledger, so it is not charged (landedAfterRefusal).
const CANCEL_INSERT = "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE pid = ? AND state = 'active' AND query LIKE 'INSERT INTO usage_bus_batches%'";

/**
 * The refusal when a usage event cannot be made durable: 503 `entitlement_unavailable` (the
 * billing side is unavailable; the call was neither served nor charged; retry later). Not
 * `internal_error` (not a bug) nor `upstream_error` (502 names the company-data store).
 */
export function meteringUnavailable(cause: unknown): AppError {
  return new AppError('entitlement_unavailable', 'Usage metering is temporarily unavailable, so the call was not served and not charged. Retry with backoff.', { cause, retryAfterSeconds: 1 });
}

/**
 * The Postgres usage bus, producer side: concurrent publishes become one INSERT of one
 * row (one commit, one fsync, instead of one per call), durable when it commits. The bus does
 * not refuse a duplicate event id (a retried publish): the ledger charges each id once.
 *
 * Durability is the point: publish resolves only after the INSERT has committed with the
 * server's default synchronous_commit, and the API sends its 2xx only then. Do not switch
 * this transaction to `synchronous_commit = off` to gain throughput: a crash could then lose
 * events of calls already served, i.e. unbilled calls.
 *
 * The billing worker's consumers are woken after batches land, by a NOTIFY of its own at most
 * every `wakeIntervalMs` (consumer-waker.ts), not by one in each batch's transaction.
 *
 * No caller waits much longer than `deadlineMs`: an event still queued then is never written
 * and its caller refused with meteringUnavailable; a batch's INSERT still running is cancelled,
 * and its callers are refused once it has failed, or a sweep later if nothing is known by then
 * (at most 2 s more: batch-publisher.ts).
 *
 * Up to `maxInFlight` batches (default 2) are inserted at once, so one slow commit does not
 * hold every call up. Not more: each batch is a statement, a commit and a wake-up of a
 * Postgres backend, and fewer, larger batches cost both processes less CPU per event. Measured
 * with `npm run bench` (50 connections, 2 cores, financials; batches of ~17 events at 2):
 * Postgres CPU per call 14–16 µs at 1 in flight and 17–20 µs at 2, throughput and p99 the same
 * within noise. (With one row per event it was 64–132 µs at 1, 81–144 at 2 and 87–186 at 4,
 * throughput at 4 the lowest.) Order between batches does not matter: the consumer claims
 * whatever is committed, oldest `seq` first.
 */
export function createPostgresUsageSink(db: Db, options: PostgresUsageSinkOptions): UsageSink {
  const client = db.client as unknown as PooledPgClient;
  let closed = false;
  const waker = createConsumerWaker({
    notify: async () => {
      await db.raw(WAKE_CONSUMERS);
    },
    intervalMs: options.wakeIntervalMs ?? 10,
    onError: (err) => options.logger.debug('could not wake the usage consumers; they poll', { err }),
  });
  const deadlineMs = options.deadlineMs ?? USAGE_PUBLISH_DEADLINE_MS;
  const settle = (events: UsageEvent[]) => void settleRefusedCalls(events, options.recordRefused, options.logger, 'Postgres bus');
  const batches = createBatchPublisher<UsageEvent>(
    async (events, deadline) => {
      const batch = JSON.stringify(events);
      try {
        const connection = await client.acquireConnection();
        // Its deadline passed while it waited for a connection: not written at all, and a
        // failure, not a return (the publisher would take a return for "written" and serve it).
        if (deadline?.passed) {
          await client.releaseConnection(connection);
          throw new Error('the deadline passed before a connection was free');
        }
        let inserting = true;
        deadline?.onPass(() => {
          if (!inserting) return;
          db.raw(CANCEL_INSERT, [connection.processID]).catch((err: unknown) => options.logger.warn('could not cancel a usage batch refused at its deadline', { err }));
        });
        try {
          await connection.query({ ...insertBatch, values: [batch, events.length] });
        } catch (err) {
          // The connection dropped under the INSERT: its commit may have happened (the answer
          // lost). Recorded as refused, which costs nothing if it did not.
          if (isDroppedConnection(err)) settle(events);
          throw err;
        } finally {
          // The connection goes back to the pool: a cancel from now on could hit another query.
          inserting = false;
          await client.releaseConnection(connection);
        }
      } catch (err) {
        throw meteringUnavailable(err);
      }
      waker.batchLanded();
    },
    {
      maxBatch: options.maxBatch ?? 500,
      lingerMs: options.lingerMs ?? 1,
      maxInFlight: options.maxInFlight ?? 2,
      deadline: {
        ms: deadlineMs,
        refusal: () => meteringUnavailable(new Error(`the usage bus did not commit within ${deadlineMs} ms`)),
        // Recorded as refused as soon as they are, before the stalled INSERT may commit and the
        // worker apply it; and again if it lands, which finds any the worker charged first.
        refusedWhileWriting: settle,
        landedAfterRefusal: settle,
      },
    },
  );
  return {
    publish(event: UsageEvent) {
      if (closed) return Promise.reject(meteringUnavailable(new Error('usage sink closed')));
      return batches.add(event);
    },
    async close() {
      closed = true;
      await batches.drain();
      await waker.close();
    },
  };
}
