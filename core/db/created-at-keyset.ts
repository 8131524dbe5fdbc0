import type { Knex } from 'knex';

/** A row's place in a newest-first (created_at, id) order: its time in microseconds since 1970
 * (as Postgres keeps it), and its id. */
export interface CreatedAtPosition {
  createdUs: string;
  id: string;
}

const CREATED_US = '(extract(epoch from created_at) * 1000000)::bigint AS created_us';

/**
 * Keyset paging on (created_at, id), for a table whose ids start with `idPrefix_` (the delivery
 * log's, the API keys'). A link carries `1764237600123456.whd_…`: microseconds, since a
 * JavaScript Date would drop them, and a cursor a little older than its row would skip the rows
 * made in the same millisecond.
 */
export function createdAtKeyset(db: Knex, idPrefix: string) {
  const pattern = new RegExp(`^(\\d{1,17})\\.(${idPrefix}_[A-Za-z0-9_-]{1,100})$`);
  return {
    cursorOf: (row: Record<string, any>): string => `${row.created_us}.${row.id}`,
    parseCursor: (cursor: string): CreatedAtPosition | null => {
      const m = pattern.exec(cursor);
      return m ? { createdUs: m[1]!, id: m[2]! } : null;
    },
    /** `query`'s rows past `from` (null: from the newest, or the oldest), nearest first:
     * `older` newest first, `newer` oldest first; with the column `cursorOf` reads. */
    beyond: (query: Knex.QueryBuilder, from: CreatedAtPosition | null, direction: 'older' | 'newer'): Knex.QueryBuilder => {
      const order = direction === 'older' ? 'desc' : 'asc';
      query.orderBy([{ column: 'created_at', order }, { column: 'id', order }]).select(db.raw(CREATED_US));
      if (from) query.andWhere(db.raw(`(created_at, id) ${direction === 'older' ? '<' : '>'} (timestamptz 'epoch' + ?::bigint * interval '1 microsecond', ?)`, [from.createdUs, from.id]));
      return query;
    },
  };
}
