import type { Knex } from 'knex';

// The Postgres usage bus keeps one row per published batch instead of one per event. The API
// makes every call's event durable before it answers, so this INSERT is on the path of every
// billed call. Per event, a row cost a jsonb parse, a heap tuple and two unique-index entries
// (`seq`, `event_id`): about as much database CPU as the rest of the call together. A batch row
// is one tuple and one index entry for its 1–500 events. The `json` type checks that the
// text is well-formed; nothing else has to parse it until the billing worker reads it.
//
// Duplicates of an event id are no longer refused on the bus: the ledger's unique event id is
// what makes a charge happen once, and it already absorbs redelivery.
//
// Pending events move over in the same transaction, so none is lost. API processes still
// running the previous version fail their inserts after this migration and answer 503
// `entitlement_unavailable` (not served, not charged) until they are replaced: run the migrate
// job before the new API, as docker-compose.yml does.
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE usage_bus_batches (
      seq bigserial PRIMARY KEY,
      -- A JSON array of usage events, as the API published it.
      events json NOT NULL,
      -- Bounds how many events one consumer transaction takes; set by the publisher.
      event_count integer NOT NULL CHECK (event_count > 0),
      enqueued_at timestamptz NOT NULL DEFAULT now()
    );
    -- Batches of a few KB would otherwise be pglz-compressed on every insert, for a row that
    -- lives a few milliseconds.
    ALTER TABLE usage_bus_batches ALTER COLUMN events SET STORAGE EXTERNAL;
    CREATE TRIGGER usage_bus_batches_notify AFTER INSERT ON usage_bus_batches
      FOR EACH STATEMENT EXECUTE FUNCTION notify_usage_bus();

    INSERT INTO usage_bus_batches (events, event_count, enqueued_at)
      SELECT json_agg(payload ORDER BY seq), count(*), min(enqueued_at)
        FROM usage_bus_events GROUP BY seq / 500;
    DROP TABLE usage_bus_events;
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE usage_bus_events (
      seq bigserial PRIMARY KEY,
      event_id text NOT NULL CONSTRAINT usage_bus_events_event_id_unique UNIQUE,
      organization_id text NOT NULL,
      payload jsonb NOT NULL,
      enqueued_at timestamptz NOT NULL DEFAULT now()
    );
    CREATE TRIGGER usage_bus_notify AFTER INSERT ON usage_bus_events
      FOR EACH STATEMENT EXECUTE FUNCTION notify_usage_bus();

    -- Every element moves back, a malformed one too (the consumer dead-letters it).
    INSERT INTO usage_bus_events (event_id, organization_id, payload, enqueued_at)
      SELECT COALESCE(e->>'eventId', format('unreadable-%s-%s', b.seq, x.i)), COALESCE(e->>'organizationId', ''), e, b.enqueued_at
        FROM usage_bus_batches b,
             jsonb_array_elements(CASE json_typeof(b.events) WHEN 'array' THEN b.events::jsonb ELSE jsonb_build_array(b.events::jsonb) END)
               WITH ORDINALITY AS x(e, i)
       ORDER BY b.seq, x.i
      ON CONFLICT (event_id) DO NOTHING;
    DROP TABLE usage_bus_batches;
  `);
}
