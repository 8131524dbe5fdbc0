import { AppError } from '../errors/index.js';
// Billing periods are calendar months in UTC, written 'YYYY-MM' (they sort as text).
const PERIOD = /^(\d{4})-(0[1-9]|1[0-2])$/;

// From 1970-01 to 9998-12: the month after each is still a 'YYYY-MM' (9999-12 is followed by
// year 10000, which the pattern, and the pages' date arithmetic, cannot write), and Date.UTC
// reads two-digit years as 19xx, which '0001'..'0099' would be.
export const FIRST_PERIOD = '1970-01';
export const LAST_PERIOD = '9998-12';

export function isPeriod(value: string): boolean {
  return PERIOD.test(value) && value >= FIRST_PERIOD && value <= LAST_PERIOD;
}

export function periodOf(at: Date | string): string {
  const d = typeof at === 'string' ? new Date(at) : at;
  return `${String(d.getUTCFullYear()).padStart(4, '0')}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

export function periodStart(period: string): Date {
  const m = PERIOD.exec(period);
  if (!m) throw new Error(`not a period (YYYY-MM): ${period}`);
  return new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, 1));
}

export function nextPeriod(period: string): string {
  const start = periodStart(period);
  return periodOf(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)));
}

/** When the period containing `now` ends: the next one's first instant. */
export function nextPeriodStart(now: Date): Date {
  return periodStart(nextPeriod(periodOf(now)));
}

/** Whole seconds (at least 1) until the period containing `now` ends: Retry-After for limit_reached. */
export function secondsUntilNextPeriod(now: Date): number {
  const end = nextPeriodStart(now);
  return Math.max(1, Math.ceil((end.getTime() - now.getTime()) / 1000));
}

/**
 * A month a report or a ledger export may cover: well formed, and begun (UTC). A month to come
 * has no figures: a report of it would show today's balance as its opening one, and an export of
 * it an empty month that reads as final. Refused, with invalid_params naming `period`.
 */
export function assertReportablePeriod(period: string, now: Date): void {
  if (!isPeriod(period)) throw new AppError('invalid_params', 'period must be YYYY-MM', { details: [{ path: 'period', message: 'YYYY-MM' }] });
  const current = periodOf(now);
  if (period > current) {
    const message = `${period} has not begun: reports and exports cover months up to the current one, ${current} (UTC)`;
    throw new AppError('invalid_params', message, { details: [{ path: 'period', message }] });
  }
}
