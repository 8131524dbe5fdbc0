import type { Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { createBatchPublisher } from './batch-publisher.js';
import type { UsageEvent } from './usage-event.js';
import type { UsageSink } from './usage-sink.js';

export interface PostgresUsageSinkOptions {
  maxBatch?: number;
  lingerMs?: number;
}

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
 */
export function createPostgresUsageSink(db: Db, options: PostgresUsageSinkOptions = {}): UsageSink {
  let closed = false;
  const batches = createBatchPublisher<UsageEvent>(
    async (events) => {
      try {
        await db.raw(
          `INSERT INTO usage_bus_events (event_id, organization_id, payload)
           SELECT * FROM unnest(?::text[], ?::text[], ?::jsonb[])
           ON CONFLICT (event_id) DO NOTHING`,
          [events.map((e) => e.eventId), events.map((e) => e.organizationId), events.map((e) => JSON.stringify(e))],
        );
      } catch (err) {
        throw meteringUnavailable(err);
      }
    },
    { maxBatch: options.maxBatch ?? 500, lingerMs: options.lingerMs ?? 1 },
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
