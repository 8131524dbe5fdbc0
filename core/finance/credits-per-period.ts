import type { Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { MAX_CREDITS_PER_PERIOD } from '../billing/index.js';

/**
 * The organization's own credits per period (null: as its plan says). Taken at the next
 * calendar-month rollover; the current period's balance is changed with a grant instead.
 */
export async function setCreditsPerPeriod(db: Db, organizationId: string, credits: number | null): Promise<void> {
  if (credits !== null && (!Number.isSafeInteger(credits) || credits < 0)) {
    throw new AppError('invalid_params', 'Credits per period must be a whole number, 0 or more.', { details: [{ path: 'creditsPerPeriod', message: 'a non-negative integer' }] });
  }
  if (credits !== null && credits > MAX_CREDITS_PER_PERIOD) {
    throw new AppError('invalid_params', `Credits per period must be at most ${MAX_CREDITS_PER_PERIOD}.`, { details: [{ path: 'creditsPerPeriod', message: `at most ${MAX_CREDITS_PER_PERIOD}` }] });
  }
  const n = await db('organizations').where({ id: organizationId }).update({ credits_per_period: credits, updated_at: db.fn.now() });
  if (n === 0) throw new AppError('not_found', `No organization with id ${organizationId}.`);
}

/** `callsCapOwn`: the organization has a calls cap of its own, `callsCapPerPeriod` (null: no cap); else its plan's applies. */
export async function organizationPeriodSettings(db: Db, organizationId: string): Promise<{ creditsPerPeriod: number | null; callsCapPerPeriod: number | null; callsCapOwn: boolean }> {
  const row = await db('organizations').where({ id: organizationId }).first<{ credits_per_period: number | null; calls_cap_per_period: number | null; calls_cap_own: boolean } | undefined>('credits_per_period', 'calls_cap_per_period', 'calls_cap_own');
  if (!row) throw new AppError('not_found', `No organization with id ${organizationId}.`);
  return { creditsPerPeriod: row.credits_per_period, callsCapPerPeriod: row.calls_cap_per_period, callsCapOwn: row.calls_cap_own };
}
