import type { Knex } from 'knex';
import { AppError } from '../errors/index.js';
import { periodOf } from './billing-period.js';

/**
 * The most credits a month may grant, a plan's or an organization's own (a billion, as a
 * call's price, MAX_USAGE_QUANTITY): each rollover adds them to the balance, and balances are
 * JavaScript numbers, exact only up to 2^53, so an unbounded grant (2^53 − 1 was accepted)
 * drifted from the ledger within two months, unseen by reconcile.
 */
export const MAX_CREDITS_PER_PERIOD = 1_000_000_000;

/** What the next rollover gives an organization: its credits and the calls cap of later months. */
export interface PeriodTerms {
  creditsPerPeriod: number;
  /** null: no cap. */
  callsCap: number | null;
  /** The cap is the organization's own (migration 018), else its plan's. */
  callsCapOwn: boolean;
  planId: string | null;
  /** The plan's cap, whether or not it is the one that applies (null: no cap, or no plan). */
  planCallsCap: number | null;
}

/**
 * The terms the monthly rollover applies (roll-over-period.ts), read here once for the rollover
 * and for whoever shows them (the operator's period form, `org show`), so that what they show as
 * "later months" is what the rollover will set.
 */
export async function periodTerms(db: Knex, organizationId: string): Promise<PeriodTerms> {
  const row = await db('organizations as o')
    .leftJoin('plans as p', 'p.id', 'o.plan_id')
    .where('o.id', organizationId)
    .first<{ credits: number | null; cap: number | null; own: boolean; plan_id: string | null; plan_cap: number | null } | undefined>(
      db.raw('COALESCE(o.credits_per_period, p.credits_per_period, 0) AS credits'),
      db.raw('CASE WHEN o.calls_cap_own THEN o.calls_cap_per_period ELSE p.calls_cap_per_period END AS cap'),
      'o.calls_cap_own as own',
      'o.plan_id',
      'p.calls_cap_per_period as plan_cap',
    );
  if (!row) throw new AppError('not_found', `No organization with id ${organizationId}.`);
  return { creditsPerPeriod: row.credits ?? 0, callsCap: row.cap ?? null, callsCapOwn: row.own, planId: row.plan_id, planCallsCap: row.plan_cap ?? null };
}

/** An organization's calls cap now and in later months, with where the later one comes from. */
export interface CallsCapTerms {
  /** The cap later months get at their rollover (null: no cap). */
  laterPeriods: number | null;
  /** `laterPeriods` is the organization's own cap; else it is its plan's (`planId`, null: no plan). */
  own: boolean;
  planId: string | null;
  /** The plan's cap, which "back to the plan's cap" gives (null: no cap, or no plan). */
  planCallsCap: number | null;
  /** The current allowance's month and its cap, which differs from `laterPeriods` after a cap set for this period only. */
  period: string | null;
  thisPeriod: number | null;
}

export async function callsCapTerms(db: Knex, organizationId: string, now: Date = new Date()): Promise<CallsCapTerms> {
  const terms = await periodTerms(db, organizationId);
  const allowance = await db('allowances').where({ organization_id: organizationId }).first<{ period: string; calls_cap: number | null } | undefined>('period', 'calls_cap');
  const current = periodOf(now);
  // An allowance the rollover has not reached yet (the first seconds of a month) gets the later
  // months' cap when it does.
  const thisPeriod = !allowance ? null : allowance.period < current ? terms.callsCap : allowance.calls_cap;
  return { laterPeriods: terms.callsCap, own: terms.callsCapOwn, planId: terms.planId, planCallsCap: terms.planCallsCap, period: allowance ? current : null, thisPeriod };
}
