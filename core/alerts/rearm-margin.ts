import type { ThresholdKind } from './alert-settings.js';

/**
 * How far, in percent of its value, a fired threshold's condition must have cleared before it
 * re-arms within the period. Without a margin any drop below re-armed it: at an 80 % threshold
 * a 503 refund gave one call back (79.99 %), the next pass re-armed it, the next charged call
 * crossed 80 % again and the same "80 % used" webhook went out again, once per refund during an
 * outage; a balance lifted to the threshold by small refunds did the same. A top-up, a grant or
 * a calls cap raised or removed that clears it by the margin re-arms it as before; the new period
 * re-arms it regardless (evaluate-thresholds.ts).
 */
export const REARM_MARGIN_PERCENT = 5n;

export interface AllowanceFigures {
  creditsUsed: number;
  creditsBalance: number;
  callsUsed: number;
  callsCap: number | null;
}

/**
 * Whether a fired threshold's condition has cleared by the margin: `percent_used` N once every
 * share of the allowance (as percentUsed measures them) is below N × 0.95, `balance_below` N once
 * the balance is at least ceil(N × 1.05) and at least N + 1. In bigint, by cross-multiplying,
 * so no rounding decides the boundary: credits are integers, and their products with 10 000 may
 * pass 2^53, where a number is no longer exact.
 */
export function clearedByMargin(kind: ThresholdKind, value: number, a: AllowanceFigures): boolean {
  const n = BigInt(value);
  if (kind === 'balance_below') {
    const atLeast = ceilDiv(n * (100n + REARM_MARGIN_PERCENT), 100n);
    return BigInt(a.creditsBalance) >= (atLeast > n ? atLeast : n + 1n);
  }
  // share < N × (100 − margin) / 100, with share = part × 100 / whole: part × 100 × 100 < N × (100 − margin) × whole
  const below = (part: number, whole: bigint) => BigInt(part) * 10_000n < n * (100n - REARM_MARGIN_PERCENT) * whole;
  const creditsBase = BigInt(a.creditsUsed) + BigInt(Math.max(0, a.creditsBalance));
  if (creditsBase > 0n && !below(a.creditsUsed, creditsBase)) return false;
  // A cap of 0 is 100 % used (percentUsed), which no threshold clears.
  if (a.callsCap === 0) return false;
  if (a.callsCap !== null && a.callsCap > 0 && !below(a.callsUsed, BigInt(a.callsCap))) return false;
  return true;
}

/** ceil(a / b) for b > 0: bigint division truncates toward zero. */
function ceilDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return q * b < a ? q + 1n : q;
}
