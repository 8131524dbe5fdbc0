import type { Knex } from 'knex';
import { AppError } from '../errors/index.js';
import { userEmails } from '../dashboard-auth/user-emails.js';
import { assertReportablePeriod, nextPeriod, periodStart } from './billing-period.js';
import { creditReference } from './credit-reference.js';

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
  /** The newest usage event counted in this month (null: none yet). For the current month, calls
   * after it are not in here yet; for a closed month, only a late event can still change it. */
  asOf: string | null;
  openingBalance: number;
  closingBalance: number;
  /** Credits added or removed by people and the calendar during the period. */
  credits: { granted: number; toppedUp: number; adjusted: number; rollover: number; used: number };
  /** What the calls cap limits for the month: its calls-priced usage less the calls refunded
   * within it (a 503 refund's adjustment, calls_delta -1), as allowances.calls_used counts them. */
  callsUsed: number;
  /** Grants, top-ups, adjustments and rollovers, oldest first; `actor` as people know them (a
   * user's e-mail, else the actor recorded, e.g. `cli:maria`); `reference`, the one a credit change
   * was made under (`--reference`, the operator form's Reference: an invoice number), else null. */
  entries: { at: string; type: string; credits: number; actor: string | null; reason: string | null; reference: string | null }[];
  byProduct: (UsageLine & { source: string; product: string })[];
  /** Per key, with the key's name and display prefix (null if the key row no longer exists). */
  byKey: (UsageLine & { keyId: string; keyName: string | null; keyPrefix: string | null })[];
  byDay: (UsageLine & { day: string })[];
  /** `actor`: who made the change that moved the flag, as people know them (as in `entries`);
   * null when the system moved it (usage, a rollover, a product's price). */
  flagHistory: { at: string; flag: string; value: boolean; reason: string | null; actor: string | null }[];
}

/**
 * One organization's month for finance. Usage belongs to the month it occurred in (UTC), so a
 * late event lands in its own month; `asOf`, the newest event counted in the month, says how
 * fresh its figures are. Balances are the ledger's running sums, so the report and `reconcile`
 * can never tell different stories.
 */
export async function buildAllowanceReport(db: Knex, organizationId: string, period: string, now: Date = new Date()): Promise<AllowanceReport> {
  assertReportablePeriod(period, now);
  const org = await db('organizations').where({ id: organizationId }).first<{ id: string; name: string } | undefined>('id', 'name');
  if (!org) throw new AppError('not_found', `No organization ${organizationId}.`);

  const from = periodStart(period);
  const to = periodStart(nextPeriod(period));
  // Usage comes from its daily buckets (migration 015), at most a row per day, product and key,
  // not from the ledger's row per call; grants, top-ups, adjustments and rollovers are few and
  // read from the ledger (its partial index of rows that are not usage, migration 013).
  const daily = db('usage_daily').where({ organization_id: organizationId, period });
  const notUsage = () => db('usage_ledger').where({ organization_id: organizationId }).whereNot({ entry_type: 'usage' });
  const lineColumns = [db.raw('SUM(quantity)::bigint AS quantity'), 'unit', db.raw('SUM(calls)::bigint AS calls')];

  const [openingUsage, openingOther, usageSums, otherSums, entries, byProduct, byKey, byDay, flags, asOf] = await Promise.all([
    db('usage_daily').where({ organization_id: organizationId }).andWhere('period', '<', period).first<{ s: number | null }>(db.raw('SUM(credits_delta)::bigint AS s')),
    notUsage().andWhere('period', '<', period).first<{ s: number | null }>(db.raw('SUM(credits_delta)::bigint AS s')),
    // Calls used are the month's calls-priced usage, not its calls_delta: a late call of a closed
    // month has calls_delta 0 (it no longer counts against a cap that was reset), yet it was a
    // call of that month, and its usage by product counts it.
    daily.clone().first<{ credits: number | null; calls: number | null }>(db.raw('SUM(credits_delta)::bigint AS credits'), db.raw("COALESCE(SUM(quantity) FILTER (WHERE unit = 'calls'), 0)::bigint AS calls")),
    notUsage()
      .andWhere({ period })
      .select<{ entry_type: string; credits: number; calls: number }[]>('entry_type', db.raw('SUM(credits_delta)::bigint AS credits'), db.raw('SUM(calls_delta)::bigint AS calls'))
      .groupBy('entry_type'),
    notUsage()
      .andWhere({ period })
      .orderBy([{ column: 'occurred_at' }, { column: 'id' }])
      .select<{ occurred_at: Date; entry_type: string; credits_delta: number; actor: string | null; reason: string | null; event_id: string }[]>('occurred_at', 'entry_type', 'credits_delta', 'actor', 'reason', 'event_id'),
    daily.clone().select<(UsageLine & { source: string; product: string })[]>('source', 'product', ...lineColumns).groupBy('source', 'product', 'unit').orderBy(['source', 'product', 'unit']),
    // Named as the key list names them: finance knows "Billing robot (sk_live_AbCd…)", not key_7Hq….
    db('usage_daily as u')
      .leftJoin('api_keys as k', 'k.id', 'u.key_id')
      .where({ 'u.organization_id': organizationId, 'u.period': period })
      .select<AllowanceReport['byKey']>(db.raw('u.key_id AS "keyId"'), db.raw('k.name AS "keyName"'), db.raw('k.prefix AS "keyPrefix"'), db.raw('SUM(u.quantity)::bigint AS quantity'), 'u.unit', db.raw('SUM(u.calls)::bigint AS calls'))
      .groupBy('u.key_id', 'k.name', 'k.prefix', 'u.unit')
      .orderBy(['u.key_id', 'u.unit']),
    daily.clone().select<(UsageLine & { day: string })[]>(db.raw(`to_char(day, 'YYYY-MM-DD') AS day`), ...lineColumns).groupByRaw('1, unit').orderByRaw('1, unit'),
    db('allowance_flag_events')
      .where({ organization_id: organizationId })
      .andWhere('at', '>=', from)
      .andWhere('at', '<', to)
      .orderBy([{ column: 'at' }, { column: 'id' }])
      .select<{ at: Date; flag: string; value: boolean; reason: string | null; actor: string | null }[]>('at', 'flag', 'value', 'reason', 'actor'),
    // The newest usage row of this month, not of the organization: a closed month's report
    // would otherwise be stamped with a later month's call, which it does not count. A usage
    // row's period is the month it occurred in, so the ledger's (organization, period,
    // occurred_at) index, read backwards, finds it at the top instead of scanning every call.
    db('usage_ledger')
      .where({ organization_id: organizationId, period, entry_type: 'usage' })
      .orderBy([{ column: 'occurred_at', order: 'desc' }, { column: 'id', order: 'desc' }])
      .first<{ occurred_at: Date } | undefined>('occurred_at'),
  ]);
  const emails = await userEmails(db, [...entries, ...flags].map((e) => e.actor));
  const known = (actor: string | null) => (actor === null ? null : (emails.get(actor) ?? actor));

  const sums = [...otherSums, { entry_type: 'usage', credits: usageSums?.credits ?? 0, calls: usageSums?.calls ?? 0 }];
  const byType = (type: string) => sums.find((s) => s.entry_type === type);
  const openingBalance = (openingUsage?.s ?? 0) + (openingOther?.s ?? 0);
  const periodDelta = sums.reduce((n, s) => n + s.credits, 0);
  return {
    organizationId,
    organizationName: org.name,
    period,
    generatedAt: now.toISOString(),
    asOf: asOf ? new Date(asOf.occurred_at).toISOString() : null,
    openingBalance,
    closingBalance: openingBalance + periodDelta,
    credits: {
      granted: byType('grant')?.credits ?? 0,
      toppedUp: byType('top_up')?.credits ?? 0,
      adjusted: byType('adjustment')?.credits ?? 0,
      rollover: byType('period_rollover')?.credits ?? 0,
      used: -(byType('usage')?.credits ?? 0),
    },
    // The cap counts a call refused (503) after it was charged once, not twice: its refund's
    // adjustment gives the call back (calls_delta -1, written only within the call's own month),
    // so the month's calls used are its calls-priced usage plus its adjustments' calls, the same
    // figure as allowances.calls_used for the current month and the overview that shows it.
    callsUsed: (byType('usage')?.calls ?? 0) + (byType('adjustment')?.calls ?? 0),
    entries: entries.map((e) => ({ at: e.occurred_at.toISOString(), type: e.entry_type, credits: e.credits_delta, actor: known(e.actor), reason: e.reason, reference: creditReference({ entryType: e.entry_type, organizationId, eventId: e.event_id }) })),
    byProduct,
    byKey,
    byDay,
    flagHistory: flags.map((f) => ({ at: f.at.toISOString(), flag: f.flag, value: f.value, reason: f.reason, actor: known(f.actor) })),
  };
}

/** A flag change's reason with who made it, as the table and the CSV show it: `top-up (maria@example.com)`. */
export function flagReasonLabel(change: { reason: string | null; actor: string | null }, reason = change.reason ?? ''): string {
  return change.actor === null ? reason : `${reason} (${change.actor})`;
}

/** How a key is shown to people: its name and display prefix, as the key list shows it. */
export function keyLabel(key: { keyName: string | null; keyPrefix: string | null }): string | null {
  return key.keyName === null ? null : `${key.keyName} (${key.keyPrefix}…)`;
}
