import { describe, expect, it } from 'vitest';
import { isPeriod, nextPeriod, periodOf, periodStart } from './billing-period.js';

describe('billing periods', () => {
  it('when a month is between 1970-01 and 9998-12 then it is a period, and the month after it can be written too', () => {
    for (const p of ['1970-01', '2026-11', '9998-12']) expect(isPeriod(p), p).toBe(true);
    expect(nextPeriod('9998-12')).toBe('9999-01');
    expect(periodStart('2026-12').toISOString()).toBe('2026-12-01T00:00:00.000Z');
  });

  it('when a month is outside that range or not a month then it is not a period', () => {
    // 9999-12 is followed by year 10000; 0001..0099 would be read as 1901..1999 by Date.UTC.
    for (const p of ['9999-12', '9999-01', '0050-01', '1969-12', '2026-13', '2026-00', '2026-1', '202611', '']) expect(isPeriod(p), p).toBe(false);
  });

  it('when a time has a year below 1000 then its month is still written YYYY-MM (zero-padded), so it sorts as text with the others', () => {
    expect(periodOf('0001-01-01T00:00:00Z')).toBe('0001-01');
    expect(periodOf('0999-12-31T23:59:59Z')).toBe('0999-12');
    expect(periodOf(new Date('2026-11-27T15:00:00Z'))).toBe('2026-11');
  });
});
