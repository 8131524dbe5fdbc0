import type { Knex } from 'knex';
import { pageWindow } from './page-window.js';

/** Where a page of a newest-first table starts: a numbered page, counted from the newest row;
 * the rows just older or just newer than a row (a cursor, as the table writes it); or the
 * oldest rows. */
export type RowPosition = { page?: number } | { older: string } | { newer: string } | { oldest: true };

/** A page's rows as read, newest first, and the cursors of the pages beside it (null: no rows
 * that way): `older` after its last row, `newer` before its first. `page`: the page's number
 * when it was asked for by number, or 1 when a cursor's read reached the newest row (null: by
 * cursor, or the oldest). */
export interface KeysetRows {
  rows: Record<string, any>[];
  page: number | null;
  older: string | null;
  newer: string | null;
}

export interface KeysetTable<K> {
  /** The cursor a link carries to a row; and back (null: not one, the first page is read). */
  cursorOf: (row: Record<string, any>) => string;
  parseCursor: (cursor: string) => K | null;
  /** The rows past a row (null: from the newest, or the oldest, row), nearest first: `older`
   * newest first, `newer` oldest first; from none, `older`, the rows in order, which numbered
   * pages read by offset. A row comparison on an index's own columns, so the index starts at the
   * row instead of counting up to it. It selects what a page needs (no select: every column):
   * the keys page leaves each key's hash unread. */
  beyond: (from: K | null, direction: 'older' | 'newer') => Knex.QueryBuilder;
}

/**
 * One page of a newest-first table (the ledger, the webhook delivery log), by number (an offset
 * into its rows in order) or from a row (keyset paging on a unique order that never changes for a row:
 * rows written meanwhile do not shift it, and the index finds its first row without walking the
 * rows before it). `offset` and `page`: the numbered page the caller has worked out
 * (`pageWindow`), read when the position is a page or a cursor that is not one.
 */
export async function keysetRows<K>(table: KeysetTable<K>, position: RowPosition, numbered: { page: number; offset: number }, pageSize: number): Promise<KeysetRows> {
  const older = 'older' in position ? table.parseCursor(position.older) : null;
  const newer = 'newer' in position ? table.parseCursor(position.newer) : null;
  // One row more than the page: whether there are rows beyond it.
  let raw: Record<string, any>[];
  let page: number | null = null;
  let beyondNewer: boolean;
  let beyondOlder: boolean;
  // Read upwards from a cursor (or the oldest row): a page of its own, unless the read reached
  // the newest row; then the first page, which holds every row it found (a page of only the
  // rows newer than the cursor would be short, or empty, and not the newest page's 50).
  const upwards = newer || 'oldest' in position ? await table.beyond(newer, 'newer').limit(pageSize + 1) : null;
  if (older) {
    raw = await table.beyond(older, 'older').limit(pageSize + 1);
    beyondOlder = raw.length > pageSize;
    raw = raw.slice(0, pageSize);
    beyondNewer = true;
  } else if (upwards && upwards.length > pageSize) {
    // Listed newest first as ever.
    raw = upwards.slice(0, pageSize).reverse();
    beyondNewer = true;
    beyondOlder = newer !== null;
  } else {
    page = upwards ? 1 : numbered.page;
    raw = await table.beyond(null, 'older').offset(upwards ? 0 : numbered.offset).limit(pageSize + 1);
    beyondOlder = raw.length > pageSize;
    raw = raw.slice(0, pageSize);
    beyondNewer = page > 1;
  }
  const first = raw[0];
  const last = raw[raw.length - 1];
  return {
    rows: raw,
    page,
    older: beyondOlder && last ? table.cursorOf(last) : null,
    newer: beyondNewer && first ? table.cursorOf(first) : null,
  };
}

/**
 * The number of a page reached from a row, and how many pages there are then, in a table counted
 * to the end (or as far as its count goes): the page after the `newer` rows above its first row,
 * `listed` rows long, among `total`. Not the first page while there is a newer row, even one that
 * does not fill a page (the first page is the newest rows, whatever a cursor reads).
 */
export function pageOfRow(newer: number, listed: number, total: number, pageSize: number): { page: number; pages: number } {
  const page = newer === 0 ? 1 : Math.max(2, 1 + Math.floor(newer / pageSize));
  return { page, pages: page + Math.ceil(Math.max(0, total - newer - listed) / pageSize) };
}

/** How many rows `query` reads, its order and columns aside. */
export async function countRows(query: Knex.QueryBuilder): Promise<number> {
  return Number((await query.clearSelect().clearOrder().count<{ n: string | number }>({ n: '*' }).first())?.n ?? 0);
}

/**
 * One page of a newest-first table counted to the end (`total` rows): `keysetRows`, numbered
 * however it was reached, by number or from a row (then by the rows newer than its first,
 * `pageOfRow`). The delivery log's, the activity page's and the keys page's; the ledger, counted
 * only up to a cap, numbers its own.
 */
export async function countedKeysetPage<K>(table: KeysetTable<K>, position: RowPosition, total: number, pageSize: number): Promise<Omit<KeysetRows, 'page'> & { page: number; pages: number }> {
  const window = pageWindow(total, 'page' in position ? position.page : undefined, pageSize);
  const read = await keysetRows(table, position, window, pageSize);
  if (read.page !== null) return { ...read, page: window.page, pages: window.pages };
  const first = read.rows[0];
  const newer = first ? await countRows(table.beyond(table.parseCursor(table.cursorOf(first)), 'newer')) : total;
  return { ...read, ...pageOfRow(newer, read.rows.length, total, pageSize) };
}
