import { ledgerEntryFromRow, type LedgerEntry } from '../billing/ledger-export.js';
import { pageWindow, type Db } from '../db/index.js';

export const ledgerEntryTypes = ['usage', 'grant', 'top_up', 'adjustment', 'period_rollover'] as const;
export type LedgerEntryType = (typeof ledgerEntryTypes)[number];

/** A ledger row as the dashboard's ledger page lists it: the export's fields. */
export type LedgerPageRow = LedgerEntry & { entryType: LedgerEntryType };

export interface LedgerPage {
  rows: LedgerPageRow[];
  page: number;
  pages: number;
  total: number;
}

/** Newest first, one page at a time, optionally one month and one entry type. */
export async function ledgerPage(
  db: Db,
  organizationId: string,
  options: { period?: string | null; type?: LedgerEntryType | null; page?: number; pageSize?: number },
): Promise<LedgerPage> {
  const pageSize = options.pageSize ?? 50;
  const base = db('usage_ledger').where({ organization_id: organizationId });
  if (options.period) base.andWhere({ period: options.period });
  if (options.type) base.andWhere({ entry_type: options.type });
  const countRow = await base.clone().count<{ n: string | number }>({ n: '*' }).first();
  const total = Number(countRow?.n ?? 0);
  const { page, pages, offset } = pageWindow(total, options.page, pageSize);
  const rows = await base
    .clone()
    .orderBy([{ column: 'occurred_at', order: 'desc' }, { column: 'id', order: 'desc' }])
    .offset(offset)
    .limit(pageSize)
    .select<Record<string, any>[]>('*');
  return { total, page, pages, rows: rows.map((r) => ledgerEntryFromRow(r) as LedgerPageRow) };
}

/** Months that have ledger rows, newest first (the period selector). */
export async function ledgerPeriods(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db('usage_ledger').where({ organization_id: organizationId }).distinct('period').orderBy('period', 'desc').select<{ period: string }[]>();
  return rows.map((r) => r.period);
}
