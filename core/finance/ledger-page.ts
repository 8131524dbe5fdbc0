import { pageWindow, type Db } from '../db/index.js';

export const ledgerEntryTypes = ['usage', 'grant', 'top_up', 'adjustment', 'period_rollover'] as const;
export type LedgerEntryType = (typeof ledgerEntryTypes)[number];

export interface LedgerPageRow {
  id: number;
  occurredAt: Date;
  entryType: LedgerEntryType;
  source: string;
  keyId: string | null;
  product: string | null;
  quantity: number;
  unit: string | null;
  creditsDelta: number;
  callsDelta: number;
  creditsBalanceAfter: number | null;
  actor: string | null;
  reason: string | null;
}

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
    .select<Record<string, any>[]>('id', 'occurred_at', 'entry_type', 'source', 'key_id', 'product', 'quantity', 'unit', 'credits_delta', 'calls_delta', 'credits_balance_after', 'actor', 'reason');
  return {
    total,
    page,
    pages,
    rows: rows.map((r) => ({
      id: r.id,
      occurredAt: r.occurred_at,
      entryType: r.entry_type,
      source: r.source,
      keyId: r.key_id,
      product: r.product,
      quantity: r.quantity,
      unit: r.unit,
      creditsDelta: r.credits_delta,
      callsDelta: r.calls_delta,
      creditsBalanceAfter: r.credits_balance_after,
      actor: r.actor,
      reason: r.reason,
    })),
  };
}

/** Months that have ledger rows, newest first (the period selector). */
export async function ledgerPeriods(db: Db, organizationId: string): Promise<string[]> {
  const rows = await db('usage_ledger').where({ organization_id: organizationId }).distinct('period').orderBy('period', 'desc').select<{ period: string }[]>();
  return rows.map((r) => r.period);
}
