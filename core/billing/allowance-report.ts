import type { Knex } from 'knex';
import { AppError } from '../errors/index.js';
import { isPeriod, nextPeriod, periodStart } from './billing-period.js';

export interface UsageLine {
  quantity: number;
  unit: string;
  calls: number;
}

export interface AllowanceReport {
  organizationId: string;
  organizationName: string;
  period: string;
  generatedAt: string;
  /** The newest usage event applied for this organization: later calls are not in here yet. */
  asOf: string | null;
  openingBalance: number;
  closingBalance: number;
  /** Credits added or removed by people and the calendar during the period. */
  credits: { granted: number; toppedUp: number; adjusted: number; rollover: number; used: number };
  callsUsed: number;
  /** Grants, top-ups, adjustments and rollovers, oldest first. */
  entries: { at: string; type: string; credits: number; actor: string | null; reason: string | null }[];
  byProduct: (UsageLine & { source: string; product: string })[];
  /** Per key, with the key's name and display prefix (null if the key row no longer exists). */
  byKey: (UsageLine & { keyId: string; keyName: string | null; keyPrefix: string | null })[];
  byDay: (UsageLine & { day: string })[];
  flagHistory: { at: string; flag: string; value: boolean; reason: string | null }[];
}

/**
 * One organization's month for finance. Usage belongs to the month it occurred in (UTC), so a
 * late event lands in its own month; `asOf` says how fresh the figures are. Balances are the
 * ledger's running sums, so the report and `reconcile` can never tell different stories.
 */
export async function buildAllowanceReport(db: Knex, organizationId: string, period: string, now: Date = new Date()): Promise<AllowanceReport> {
  if (!isPeriod(period)) throw new AppError('invalid_params', 'period must be YYYY-MM', { details: [{ path: 'period', message: 'YYYY-MM' }] });
  const org = await db('organizations').where({ id: organizationId }).first<{ id: string; name: string } | undefined>('id', 'name');
  if (!org) throw new AppError('not_found', `No organization ${organizationId}.`);

  const from = periodStart(period);
  const to = periodStart(nextPeriod(period));
  const usage = db('usage_ledger').where({ organization_id: organizationId, period, entry_type: 'usage' });
  const lineColumns = [db.raw('SUM(quantity)::bigint AS quantity'), 'unit', db.raw('COUNT(*)::bigint AS calls')];

  const [opening, sums, entries, byProduct, byKey, byDay, flags, asOf] = await Promise.all([
    db('usage_ledger').where({ organization_id: organizationId }).andWhere('period', '<', period).first<{ s: number | null }>(db.raw('SUM(credits_delta)::bigint AS s')),
    db('usage_ledger')
      .where({ organization_id: organizationId, period })
      .select<{ entry_type: string; credits: number; calls: number }[]>('entry_type', db.raw('SUM(credits_delta)::bigint AS credits'), db.raw('SUM(calls_delta)::bigint AS calls'))
      .groupBy('entry_type'),
    db('usage_ledger')
      .where({ organization_id: organizationId, period })
      .whereNot({ entry_type: 'usage' })
      .orderBy([{ column: 'occurred_at' }, { column: 'id' }])
      .select<{ occurred_at: Date; entry_type: string; credits_delta: number; actor: string | null; reason: string | null }[]>('occurred_at', 'entry_type', 'credits_delta', 'actor', 'reason'),
    usage.clone().select<(UsageLine & { source: string; product: string })[]>('source', 'product', ...lineColumns).groupBy('source', 'product', 'unit').orderBy(['source', 'product', 'unit']),
    // Named as the key list names them: finance knows "Billing robot (sk_live_AbCd…)", not key_7Hq….
    db('usage_ledger as u')
      .leftJoin('api_keys as k', 'k.id', 'u.key_id')
      .where({ 'u.organization_id': organizationId, 'u.period': period, 'u.entry_type': 'usage' })
      .select<AllowanceReport['byKey']>(db.raw('u.key_id AS "keyId"'), db.raw('k.name AS "keyName"'), db.raw('k.prefix AS "keyPrefix"'), ...lineColumns)
      .groupBy('u.key_id', 'k.name', 'k.prefix', 'u.unit')
      .orderBy(['u.key_id', 'u.unit']),
    usage.clone().select<(UsageLine & { day: string })[]>(db.raw(`to_char(occurred_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day`), ...lineColumns).groupByRaw('1, unit').orderByRaw('1, unit'),
    db('allowance_flag_events')
      .where({ organization_id: organizationId })
      .andWhere('at', '>=', from)
      .andWhere('at', '<', to)
      .orderBy([{ column: 'at' }, { column: 'id' }])
      .select<{ at: Date; flag: string; value: boolean; reason: string | null }[]>('at', 'flag', 'value', 'reason'),
    db('usage_ledger').where({ organization_id: organizationId, entry_type: 'usage' }).first<{ t: Date | null }>(db.raw('MAX(occurred_at) AS t')),
  ]);

  const byType = (type: string) => sums.find((s) => s.entry_type === type);
  const openingBalance = opening?.s ?? 0;
  const periodDelta = sums.reduce((n, s) => n + s.credits, 0);
  return {
    organizationId,
    organizationName: org.name,
    period,
    generatedAt: now.toISOString(),
    asOf: asOf?.t ? new Date(asOf.t).toISOString() : null,
    openingBalance,
    closingBalance: openingBalance + periodDelta,
    credits: {
      granted: byType('grant')?.credits ?? 0,
      toppedUp: byType('top_up')?.credits ?? 0,
      adjusted: byType('adjustment')?.credits ?? 0,
      rollover: byType('period_rollover')?.credits ?? 0,
      used: -(byType('usage')?.credits ?? 0),
    },
    callsUsed: byType('usage')?.calls ?? 0,
    entries: entries.map((e) => ({ at: e.occurred_at.toISOString(), type: e.entry_type, credits: e.credits_delta, actor: e.actor, reason: e.reason })),
    byProduct,
    byKey,
    byDay,
    flagHistory: flags.map((f) => ({ at: f.at.toISOString(), flag: f.flag, value: f.value, reason: f.reason })),
  };
}

/** How a key is shown to people: its name and display prefix, as the key list shows it. */
export function keyLabel(key: { keyName: string | null; keyPrefix: string | null }): string | null {
  return key.keyName === null ? null : `${key.keyName} (${key.keyPrefix}…)`;
}
