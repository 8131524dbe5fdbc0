import type { Db } from '../db/index.js';
import { nextPeriod, periodStart } from '../billing/billing-period.js';
import { AppError } from '../errors/index.js';
import { creditsCoverage, type CreditsCoverage } from './credits-coverage.js';
import { usageSince } from './usage-since.js';

export interface AllowanceGlance {
  organizationId: string;
  period: string;
  creditsBalance: number;
  callsUsed: number;
  callsCap: number | null;
  creditsExhausted: boolean;
  limitReached: boolean;
  /** Credits spent on usage in this period (positive). */
  creditsUsed: number;
  /**
   * Share of the period's allowance used, 0..100 (integer, rounded down): the larger of credits
   * used / (used + balance) and calls used / cap. Null when there is nothing to measure against.
   */
  percentUsed: number | null;
  /**
   * Burn rate: the use of the last `BURN_WINDOW_DAYS` days divided by the days since the first
   * use among them (`burnSince`), one at least; 0 when there was none.
   */
  creditsPerDay: number;
  callsPerDay: number;
  /** The first use in the last `BURN_WINDOW_DAYS` days, which the rate counts from; null: none. */
  burnSince: Date | null;
  /** When the balance runs out at that rate; null when nothing is being spent. */
  creditsRunOutAt: Date | null;
  /** When the calls cap is reached at that rate; null without a cap, without calls, or not this period. */
  callsCapReachedAt: Date | null;
  /** The newest usage event applied: later calls are not in these figures yet. */
  asOf: Date | null;
  /**
   * Which credits-priced products the balance still pays for: calls dearer than the balance are
   * refused (402) while `creditsExhausted` is down, as long as a cheaper product can be paid.
   */
  coverage: CreditsCoverage;
}

export const BURN_WINDOW_DAYS = 7;
const DAY_MS = 86_400_000;
const RUN_OUT_HORIZON_DAYS = 36_525;

export function percentUsed(a: { creditsUsed: number; creditsBalance: number; callsUsed: number; callsCap: number | null }): number | null {
  const shares: number[] = [];
  const creditsBase = a.creditsUsed + Math.max(0, a.creditsBalance);
  if (creditsBase > 0) shares.push(Math.floor((a.creditsUsed * 100) / creditsBase));
  if (a.callsCap !== null && a.callsCap > 0) shares.push(Math.floor((a.callsUsed * 100) / a.callsCap));
  else if (a.callsCap === 0) shares.push(100);
  return shares.length === 0 ? null : Math.min(100, Math.max(...shares));
}

export async function allowanceGlance(db: Db, organizationId: string, now = new Date()): Promise<AllowanceGlance> {
  const row = await db('allowances').where({ organization_id: organizationId }).first<{
    period: string; credits_balance: number; calls_used: number; credits_used: number; calls_cap: number | null; credits_exhausted: boolean; limit_reached: boolean; last_event_at: Date | null;
  } | undefined>('period', 'credits_balance', 'calls_used', 'credits_used', 'calls_cap', 'credits_exhausted', 'limit_reached', 'last_event_at');
  if (!row) throw new AppError('not_found', `No allowance for organization ${organizationId}.`);
  const windowStart = new Date(now.getTime() - BURN_WINDOW_DAYS * DAY_MS);
  // Credits used this period are kept on the allowance by the worker (migration 014); the burn
  // rate reads the daily buckets, and the ledger for the window's first, partial day only.
  const creditsUsed = row.credits_used;
  const [burn, coverage] = await Promise.all([usageSince(db, organizationId, windowStart), creditsCoverage(db, organizationId, row.credits_balance)]);
  // A new customer's first hour should not look like a whole week: divide by the time since
  // the first call in the window, but by at least one day.
  const days = burn.first ? Math.max(1, (now.getTime() - burn.first.getTime()) / DAY_MS) : BURN_WINDOW_DAYS;
  const creditsPerDay = burn.credits / days;
  const callsPerDay = burn.calls / days;
  // Past a century the answer is "not at the current rate": a big balance and light use would
  // otherwise give a date past what a Date can hold (an Invalid Date the page cannot format).
  const daysLeft = creditsPerDay > 0 ? Math.max(0, row.credits_balance) / creditsPerDay : Infinity;
  const creditsRunOutAt = daysLeft <= RUN_OUT_HORIZON_DAYS ? new Date(now.getTime() + daysLeft * DAY_MS) : null;
  // The cap resets with the period, so a date after the period's end means "not reached".
  const capAt = row.calls_cap !== null && callsPerDay > 0 ? new Date(now.getTime() + (Math.max(0, row.calls_cap - row.calls_used) / callsPerDay) * DAY_MS) : null;
  const callsCapReachedAt = capAt && capAt < periodStart(nextPeriod(row.period)) ? capAt : null;
  return {
    organizationId,
    period: row.period,
    creditsBalance: row.credits_balance,
    callsUsed: row.calls_used,
    callsCap: row.calls_cap,
    creditsExhausted: row.credits_exhausted,
    limitReached: row.limit_reached,
    creditsUsed,
    percentUsed: percentUsed({ creditsUsed, creditsBalance: row.credits_balance, callsUsed: row.calls_used, callsCap: row.calls_cap }),
    creditsPerDay: Math.round(creditsPerDay),
    callsPerDay: Math.round(callsPerDay),
    burnSince: burn.first,
    creditsRunOutAt,
    callsCapReachedAt,
    asOf: row.last_event_at,
    coverage,
  };
}
