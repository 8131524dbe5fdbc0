import { ledgerEntryFromRow, ledgerInOrder, type LedgerEntry } from '../billing/ledger-export.js';
import { apiKeyLabels } from '../auth/api-key-labels.js';
import { userEmails } from '../dashboard-auth/user-emails.js';
import { pageWindow, type Db } from '../db/index.js';

export const ledgerEntryTypes = ['usage', 'grant', 'top_up', 'adjustment', 'period_rollover', 'cap_change', 'refused'] as const;
export type LedgerEntryType = (typeof ledgerEntryTypes)[number];

/** A ledger row as the dashboard's ledger page lists it: the export's fields, who acted as
 * people know them (the e-mail of a user id; other actors as recorded) and the key as the keys
 * page shows it (null: no key, or its row is gone). */
export type LedgerPageRow = LedgerEntry & { entryType: LedgerEntryType; actorLabel: string | null; keyLabel: string | null };

export interface LedgerPage {
  rows: LedgerPageRow[];
  page: number;
  pages: number;
  /** Rows matching, counted up to `countCap`; `more`: there are more than that. */
  total: number;
  more: boolean;
}

/**
 * Newest first: by month, then in the order the rows were applied (`ledgerInOrder`), one page
 * at a time, optionally one month and one entry type. Each row's balance after then follows from
 * the row below it, but for rows the selection leaves out (another type; a late event of
 * another month, listed with its own month). The order is that of the ledger's index
 * (migration 032), so a page reads its 50 rows from the index instead of sorting the
 * organization's whole ledger. Counting is a walk over every matching row, and a
 * busy organization has one per call: it stops at `countCap` (the page then says "more than"),
 * which no one pages through by hand; a month and a type narrow it.
 */
export async function ledgerPage(
  db: Db,
  organizationId: string,
  options: { period?: string | null; type?: LedgerEntryType | null; page?: number; pageSize?: number; countCap?: number },
): Promise<LedgerPage> {
  const pageSize = options.pageSize ?? 50;
  const countCap = options.countCap ?? 100_000;
  // The rows counted are the rows listed: one filter (ledgerInOrder's), its order dropped.
  const selection = () => ledgerInOrder(db, organizationId, { period: options.period ?? null, entryType: options.type ?? null }, 'desc');
  const counted = await db
    .from(selection().clearOrder().select(db.raw('1')).limit(countCap + 1).as('capped'))
    .count<{ n: string | number }>({ n: '*' })
    .first();
  const found = Number(counted?.n ?? 0);
  const { page, pages, offset } = pageWindow(found, options.page, pageSize);
  const rows = await selection()
    .offset(offset)
    .limit(pageSize)
    .select<Record<string, any>[]>('*');
  const [emails, keys] = await Promise.all([userEmails(db, rows.map((r) => r.actor as string | null)), apiKeyLabels(db, rows.map((r) => r.key_id as string | null))]);
  const entries = rows.map((r) => {
    const entry = ledgerEntryFromRow(r);
    return {
      ...entry,
      entryType: entry.entryType as LedgerEntryType,
      actorLabel: entry.actor === null ? null : (emails.get(entry.actor) ?? entry.actor),
      keyLabel: entry.keyId === null ? null : (keys.get(entry.keyId) ?? null),
    };
  });
  return { total: Math.min(found, countCap), more: found > countCap, page, pages, rows: entries };
}

/** Months that have ledger rows, newest first (the period selector). */
export async function ledgerPeriods(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db('usage_ledger').where({ organization_id: organizationId }).distinct('period').orderBy('period', 'desc').select<{ period: string }[]>();
  return rows.map((r) => r.period);
}
