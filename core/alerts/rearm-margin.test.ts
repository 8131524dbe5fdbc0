import { describe, expect, it } from 'vitest';
import { clearedByMargin } from './rearm-margin.js';

const credits = (creditsUsed: number, creditsBalance: number) => ({ creditsUsed, creditsBalance, callsUsed: 0, callsCap: null });
const calls = (callsUsed: number, callsCap: number | null) => ({ creditsUsed: 0, creditsBalance: 0, callsUsed, callsCap });

describe('when a fired threshold may re-arm', () => {
  it('when percent_used 80 then use must be below 76 %, exactly 76 % is not', () => {
    expect(clearedByMargin('percent_used', 80, credits(799_999, 200_001))).toBe(false); // 79.9999 %
    expect(clearedByMargin('percent_used', 80, credits(760, 240))).toBe(false); // 76 % exactly
    expect(clearedByMargin('percent_used', 80, credits(759, 241))).toBe(true);
    expect(clearedByMargin('percent_used', 80, calls(76, 100))).toBe(false);
    expect(clearedByMargin('percent_used', 80, calls(75, 100))).toBe(true);
    // 50 → 47.5 %: 19 of 40 is 47.5 %, 18 of 40 is 45 %.
    expect(clearedByMargin('percent_used', 50, calls(19, 40))).toBe(false);
    expect(clearedByMargin('percent_used', 50, calls(18, 40))).toBe(true);
  });

  it('when percent_used then every share must be below, credits and calls alike, and a cap of 0 never is', () => {
    expect(clearedByMargin('percent_used', 80, { creditsUsed: 10, creditsBalance: 990, callsUsed: 79, callsCap: 100 })).toBe(false);
    expect(clearedByMargin('percent_used', 80, { creditsUsed: 790, creditsBalance: 210, callsUsed: 1, callsCap: 100 })).toBe(false);
    expect(clearedByMargin('percent_used', 80, { creditsUsed: 10, creditsBalance: 990, callsUsed: 1, callsCap: 100 })).toBe(true);
    expect(clearedByMargin('percent_used', 1, calls(0, 0))).toBe(false);
    // A negative balance counts as none, as in percentUsed: 10 used of 10 is 100 %.
    expect(clearedByMargin('percent_used', 80, credits(10, -5))).toBe(false);
    // Nothing to measure against: the condition cannot hold.
    expect(clearedByMargin('percent_used', 80, calls(5, null))).toBe(true);
  });

  it('when percent_used on figures past 2^53 once multiplied then the boundary is still exact', () => {
    const used = 3_040_000_000_000; // 76 % of 4 × 10^12; × 10 000 passes 2^53
    const balance = 960_000_000_000;
    expect(clearedByMargin('percent_used', 80, credits(used, balance))).toBe(false);
    expect(clearedByMargin('percent_used', 80, credits(used - 1, balance + 1))).toBe(true);
  });

  it('when balance_below N then the balance must be at least ceil(N × 1.05), and at least N + 1', () => {
    expect(clearedByMargin('balance_below', 500, credits(0, 524))).toBe(false);
    expect(clearedByMargin('balance_below', 500, credits(0, 525))).toBe(true);
    expect(clearedByMargin('balance_below', 1_001, credits(0, 1_051))).toBe(false); // 1 051.05
    expect(clearedByMargin('balance_below', 1_001, credits(0, 1_052))).toBe(true);
    expect(clearedByMargin('balance_below', 10, credits(0, 10))).toBe(false); // 10.5 → 11
    expect(clearedByMargin('balance_below', 10, credits(0, 11))).toBe(true);
    expect(clearedByMargin('balance_below', 0, credits(0, 0))).toBe(false); // N + 1
    expect(clearedByMargin('balance_below', 0, credits(0, 1))).toBe(true);
  });
});
