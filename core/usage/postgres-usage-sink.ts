import type { Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { createBatchPublisher } from './batch-publisher.js';
import type { UsageEvent } from './usage-event.js';
import type { UsageSink } from './usage-sink.js';

export interface PostgresUsageSinkOptions {
  maxBatch?: number;
  lingerMs?: number;
  /** Batches being inserted at once, each on its own pooled connection. */
  maxInFlight?: number;
}

// What the sink needs of knex's pg client: a pooled connection that can run a named (prepared)
// statement, parsed and planned once per connection instead of once per batch.
interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<unknown>;
}
interface PooledPgClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
}

const insertEvents = {
  name: 'usage_bus_insert_events',
  text: `INSERT INTO usage_bus_events (event_id, organization_id, payload)
         SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[])
         ON CONFLICT (event_id) DO NOTHING`,
};

/**
 * The refusal when a usage event cannot be made durable: 503 `entitlement_unavailable` (the
 * billing side is unavailable; the call was neither served nor charged; retry later). Not
 * `internal_error` (not a bug) nor `upstream_error` (502 names the company-data store).
 */
export function meteringUnavailable(cause: unknown): AppError {
  return new AppError('entitlement_unavailable', 'Usage metering is temporarily unavailable, so the call was not served and not charged. Retry with backoff.', { cause, retryAfterSeconds: 1 });
}

/**
 * The Postgres usage bus, producer side: concurrent publishes become one multi-row INSERT
 * (one commit, one fsync, instead of one per call), durable when it commits. A duplicate
 * event id (a retried publish) is ignored.
 *
 * Durability is the point: publish resolves only after the INSERT has committed with the
 * server's default synchronous_commit, and the API sends its 2xx only then. Do not switch
 * this transaction to `synchronous_commit = off` to gain throughput: a crash could then lose
 * events of calls already served, i.e. unbilled calls.
 *
 * Up to `maxInFlight` batches (default 4) are inserted at once, so under load a call waits
 * for its own batch's commit, not for the batch ahead of it and then its own. Order between
 * batches does not matter: the consumer claims whatever is committed, oldest `seq` first.
 */
export function createPostgresUsageSink(db: Db, options: PostgresUsageSinkOptions = {}): UsageSink {
  const client = db.client as unknown as PooledPgClient;
  let closed = false;
  const batches = createBatchPublisher<UsageEvent>(
    async (events) => {
      const eventIds = new Array<string>(events.length);
      const organizationIds = new Array<string>(events.length);
      const payloads = new Array<string>(events.length);
      for (let i = 0; i < events.length; i += 1) {
        const event = events[i]!;
        eventIds[i] = event.eventId;
        organizationIds[i] = event.organizationId;
        payloads[i] = JSON.stringify(event);
      }
      try {
        const connection = await client.acquireConnection();
        try {
          await connection.query({ ...insertEvents, values: [eventIds, organizationIds, payloads] });
        } finally {
          await client.releaseConnection(connection);
        }
      } catch (err) {
        throw meteringUnavailable(err);
      }
    },
    { maxBatch: options.maxBatch ?? 500, lingerMs: options.lingerMs ?? 1, maxInFlight: options.maxInFlight ?? 4 },
  );
  return {
    publish(event: UsageEvent) {
      if (closed) return Promise.reject(meteringUnavailable(new Error('usage sink closed')));
      return batches.add(event);
    },
    async close() {
      closed = true;
      await batches.drain();
    },
  };
}
