import { nextPeriodStart, secondsUntilNextPeriod } from '../billing/billing-period.js';
import { askForCap, askForCredits, capReachedReason } from '../errors/index.js';
import type { Measure } from './access-control.js';
import type { PendingTotals } from './pending-charges.js';

export interface AllowanceState {
  creditsExhausted: boolean;
  limitReached: boolean;
  creditsBalance: number | null;
  callsUsed: number;
  callsCap: number | null;
}

export interface AllowanceRefusal {
  code: 'credits_exhausted' | 'limit_reached';
  message?: string;
  retryAfterSeconds?: number;
  /** Only this process's unapplied calls make it refuse: the state without them would serve it. */
  becausePending: boolean;
}

/**
 * Why the allowance refuses one call priced `measure`, or undefined. Each flag refuses only the
 * calls priced in its own unit (decisions.md). The flags say that no call can be paid; a call
 * dearer than what is left is refused too, from the balance and count read with them, less this
 * process's calls the worker has not applied yet (`unapplied`). A product priced at 0 credits
 * costs nothing: an exhausted balance still covers it.
 */
export function allowanceRefusal(state: AllowanceState, unapplied: PendingTotals, measure: Measure, now: Date): AllowanceRefusal | undefined {
  const { quantity, unit } = measure;
  if (unit === 'credits' && quantity > 0) {
    if (state.creditsExhausted) return { code: 'credits_exhausted', becausePending: false };
    if (state.creditsBalance !== null && state.creditsBalance - unapplied.credits < quantity) {
      return {
        code: 'credits_exhausted',
        message: `The organization's credit balance cannot cover this call's ${quantity} credits. ${askForCredits}`,
        becausePending: state.creditsBalance >= quantity,
      };
    }
  }
  if (unit === 'calls') {
    if (state.limitReached) return capReached(capReachedReason, now, false);
    const used = state.callsUsed + unapplied.calls;
    if (state.callsCap !== null && used + quantity > state.callsCap) {
      const left = Math.max(0, state.callsCap - used);
      return capReached(`This call counts as ${quantity} calls, more than the ${left} left under the organization's call cap for this billing period.`, now, state.callsUsed + quantity <= state.callsCap);
    }
  }
  return undefined;
}

// Built only for a refusal: every calls-priced call passes through the checks above.
function capReached(reason: string, now: Date, becausePending: boolean): AllowanceRefusal {
  // When the cap resets, as a date: an agent reads "resets 2026-12-01T00:00:00Z" better than a
  // Retry-After of two million seconds.
  const resets = nextPeriodStart(now).toISOString().replace('.000Z', 'Z');
  return { code: 'limit_reached', message: `${reason} It resets at the start of the next month, ${resets}; ${askForCap}`, retryAfterSeconds: secondsUntilNextPeriod(now), becausePending };
}
