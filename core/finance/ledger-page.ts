import { ledgerEntryFromRow, ledgerInOrder, type LedgerEntry } from '../billing/ledger-export.js';
import { apiKeyLabels } from '../auth/api-key-labels.js';
import { userEmails } from '../dashboard-auth/user-emails.js';
import { keysetRows, pageOfRow, pageWindow, type Db, type RowPosition } from '../db/index.js';

export const ledgerEntryTypes = ['usage', 'grant', 'top_up', 'adjustment', 'period_rollover', 'cap_change', 'refused'] as const;
export type LedgerEntryType = (typeof ledgerEntryTypes)[number];

/** A ledger row as the dashboard's ledger page lists it: the export's fields, who acted as
 * people know them (the e-mail of a user id; other actors as recorded) and the key as the keys
 * page shows it (null: no key, or its row is gone). */
export type LedgerPageRow = LedgerEntry & { entryType: LedgerEntryType; actorLabel: string | null; keyLabel: string | null };

/** Where a ledger page starts (`RowPosition`): the cursors are `rowCursor`'s. */
export type LedgerPosition = RowPosition;

export interface LedgerPage {
  rows: LedgerPageRow[];
  /** The page's number: asked for, or of a page reached by a cursor within the count (by the
   * rows newer than it; 1 when it reached the newest row); null: the oldest, or a page reached
   * by a cursor past the count. */
  page: number | null;
  pages: number;
  /** Rows matching, counted up to `countCap`; `more`: there are more than that. */
  total: number;
  more: boolean;
  /** Cursors of the pages beside this one (null: no rows that way): `older` after its last
   * row, `newer` before its first. */
  older: string | null;
  newer: string | null;
}

/** A row's place in the page's order, (period, id), as a link carries it: `2026-11.1234`. */
export const rowCursor = (row: { period: string; id: number | string }): string => `${row.period}.${row.id}`;

function parseCursor(cursor: string): { period: string; id: string } | null {
  const m = /^(\d{4}-\d{2})\.(\d{1,18})$/.exec(cursor);
  return m ? { period: m[1]!, id: m[2]! } : null;
}

/** The rows past a row (null: from the newest, or the oldest, row) in one direction, nearest
 * first: `older` newest first, `newer` oldest first. A row comparison on the index's own
 * columns, so the index starts at the row instead of counting up to it. */
export function ledgerRowsBeyond(db: Db, organizationId: string, filters: { period: string | null; entryType: string | null }, from: { period: string; id: string } | null, direction: 'older' | 'newer') {
  const rows = ledgerInOrder(db, organizationId, filters, direction === 'older' ? 'desc' : 'asc');
  if (from) rows.andWhere(db.raw(`(period, id) ${direction === 'older' ? '<' : '>'} (?, ?)`, [from.period, from.id]));
  return rows;
}

/**
 * Newest first: by month, then in the order the rows were applied (`ledgerInOrder`), one page
 * at a time, optionally one month and one entry type. Each row's balance after then follows from
 * the row below it, but for rows the selection leaves out (another type; a late event of
 * another month, listed with its own month). The order is that of the ledger's index
 * (migration 032), so a page reads its 50 rows from the index instead of sorting the
 * organization's whole ledger. Counting is a walk over every matching row, and a
 * busy organization has one per call: it stops at `countCap` (the page then says "more than").
 * Numbered pages reach as far as the count; past it, and to the oldest rows, a page starts from
 * a row instead (keyset paging on (period, id), which is unique and never changes for a row:
 * the index finds the page's first row without walking the rows before it), so every row can be
 * reached, however many a month of calls holds. A page's Previous and Next start from a row
 * too, within the count as well (`rowPager`): a call applied while a reader goes from page 1 to
 * page 2 does not push page 1's last row onto page 2, listed twice; such a page is numbered by
 * the rows newer than it, counted up to the cap as the total is.
 */
export async function ledgerPage(
  db: Db,
  organizationId: string,
  options: { period?: string | null; type?: LedgerEntryType | null; pageSize?: number; countCap?: number } & LedgerPosition,
): Promise<LedgerPage> {
  const pageSize = options.pageSize ?? 50;
  const countCap = options.countCap ?? 100_000;
  const filters = { period: options.period ?? null, entryType: options.type ?? null };
  // The rows counted are the rows listed: one filter (ledgerInOrder's), its order dropped.
  const selection = () => ledgerInOrder(db, organizationId, filters, 'desc');
  // Counted up to one row past the cap: whether there are more.
  const countUpTo = async (query: ReturnType<typeof selection>) => Number((await db
    .from(query.clearOrder().select(db.raw('1')).limit(countCap + 1).as('capped'))
    .count<{ n: string | number }>({ n: '*' })
    .first())?.n ?? 0);
  const found = await countUpTo(selection());
  const window = pageWindow(found, 'page' in options ? options.page : undefined, pageSize);
  const { rows: raw, page: asked, older, newer } = await keysetRows(
    {
      cursorOf: (row) => rowCursor(row as { period: string; id: string }),
      parseCursor,
      beyond: (from, direction) => ledgerRowsBeyond(db, organizationId, filters, from, direction),
    },
    options,
    window,
    pageSize,
  );
  let page = asked;
  let pages = window.pages;
  const first = raw[0] as { period: string; id: string } | undefined;
  if (asked === null && !('oldest' in options) && first) {
    // Reached by a cursor (a page's Previous or Next): numbered by the rows newer than it, as
    // far as the count goes; past it, a page by row as before.
    const above = await countUpTo(ledgerRowsBeyond(db, organizationId, filters, { period: first.period, id: String(first.id) }, 'newer'));
    if (above > 0 && above <= countCap) ({ page, pages } = pageOfRow(above, raw.length, found, pageSize));
  }
  const [emails, keys] = await Promise.all([userEmails(db, raw.map((r) => r.actor as string | null)), apiKeyLabels(db, raw.map((r) => r.key_id as string | null))]);
  const entries = raw.map((r) => {
    const entry = ledgerEntryFromRow(r);
    return {
      ...entry,
      entryType: entry.entryType as LedgerEntryType,
      actorLabel: entry.actor === null ? null : (emails.get(entry.actor) ?? entry.actor),
      keyLabel: entry.keyId === null ? null : (keys.get(entry.keyId) ?? null),
    };
  });
  return {
    total: Math.min(found, countCap),
    more: found > countCap,
    page,
    pages,
    rows: entries,
    older,
    newer,
  };
}

/** Months that have ledger rows, newest first (the period selector). */
export async function ledgerPeriods(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db('usage_ledger').where({ organization_id: organizationId }).distinct('period').orderBy('period', 'desc').select<{ period: string }[]>();
  return rows.map((r) => r.period);
}
