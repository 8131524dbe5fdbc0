import type { Db } from '../db/index.js';
import type { UsageEvent } from './usage-event.js';
import type { UsageSink } from './usage-sink.js';

/**
 * The Postgres usage bus, producer side: one INSERT per event into usage_bus_events, durable
 * when it commits. A duplicate event id (a retried publish) is ignored.
 */
export function createPostgresUsageSink(db: Db): UsageSink {
  return {
    async publish(event: UsageEvent) {
      await db('usage_bus_events')
        .insert({ event_id: event.eventId, organization_id: event.organizationId, payload: event })
        .onConflict('event_id')
        .ignore();
    },
    async close() {},
  };
}
