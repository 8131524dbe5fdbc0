import type { Knex } from 'knex';
import { applyUsageBatch } from '../../core/billing/apply-usage-batch.js';
import { batchMessages } from '../../core/usage/index.js';

// Every event element of every batch row waiting on the Postgres bus (migration 010), a
// malformed row as one element: `e` is the event, `b.seq` and `x.i` its place.
const BUS_ELEMENTS = `usage_bus_batches b,
  json_array_elements(CASE json_typeof(b.events) WHEN 'array' THEN b.events ELSE json_build_array(b.events) END)
    WITH ORDINALITY AS x(e, i)`;

/** The usage events waiting on the Postgres bus, in publishing order: all, one organization's or one event. */
export async function eventsOnBus(db: Knex, filter: { organizationId?: string; eventId?: string } = {}): Promise<Record<string, unknown>[]> {
  const { rows } = await db.raw<{ rows: { e: Record<string, unknown> }[] }>(
    `SELECT x.e FROM ${BUS_ELEMENTS}
      WHERE (?::text IS NULL OR x.e->>'organizationId' = ?) AND (?::text IS NULL OR x.e->>'eventId' = ?)
      ORDER BY b.seq, x.i`,
    [filter.organizationId ?? null, filter.organizationId ?? null, filter.eventId ?? null, filter.eventId ?? null],
  );
  return rows.map((r) => r.e);
}

/**
 * Applies this organization's events waiting on the Postgres bus, as the billing worker would,
 * and leaves other organizations' events on the bus (a batch row holds whatever calls were
 * published together: its other events go back as a row of their own).
 */
export async function applyBusEventsOf(db: Knex, organizationId: string): Promise<number> {
  return db.transaction(async (trx) => {
    const { rows } = await trx.raw<{ rows: { seq: number; events: unknown }[] }>(
      `DELETE FROM usage_bus_batches WHERE seq IN (SELECT b.seq FROM ${BUS_ELEMENTS} WHERE x.e->>'organizationId' = ?) RETURNING seq, events`,
      [organizationId],
    );
    const messages = rows.sort((a, b) => a.seq - b.seq).flatMap(batchMessages);
    const isMine = (value: unknown) => (value as { organizationId?: unknown } | null)?.organizationId === organizationId;
    const others = messages.filter((m) => !isMine(m.value)).map((m) => m.value);
    if (others.length > 0) await trx('usage_bus_batches').insert({ events: JSON.stringify(others), event_count: others.length });
    const mine = messages.filter((m) => isMine(m.value));
    if (mine.length === 0) return 0;
    return (await applyUsageBatch(trx, mine, { bus: 'postgres' })).applied;
  });
}
