import type { Knex } from 'knex';
import { CONTROL_MESSAGE, holdsControlCharacter } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { newId } from '../ids/index.js';
import { cheapestCreditCalls, evaluateFlags, flagChanges, recordFlagChanges, type Flags } from './allowance-flags.js';
import { lockAllowances, type AllowanceRow } from './allowance-rows.js';
import { periodOf } from './billing-period.js';
import { CREDIT_ID_PREFIX, REFERENCE_USED, type CreditChangeKind } from './credit-reference.js';
import type { LedgerEntry } from './ledger-export.js';
import { rollOverAllowance } from './roll-over-period.js';
import { systemReason } from './system-reasons.js';

export { MAX_REFERENCE, REFERENCE_USED, referencedEventId, type CreditChangeKind } from './credit-reference.js';

export interface AdministrationInput {
  organizationId: string;
  /** Who made the change (`cli:alice`, `usr_…`): recorded on the ledger row. */
  actor: string;
  /** Why: recorded on the ledger row and shown in reports. */
  reason: string;
  now?: Date;
}

export interface AllowanceSnapshot {
  organizationId: string;
  period: string;
  creditsBalance: number;
  callsUsed: number;
  callsCap: number | null;
  creditsExhausted: boolean;
  limitReached: boolean;
  /** The ledger row written for this change. */
  ledgerEventId: string;
  /**
   * Set when the change was asked under an event id already on the ledger (the same command run
   * twice): when that row was written. Nothing was changed the second time.
   */
  alreadyRecordedAt?: Date;
}

/**
 * Credits in or out: `grant` (included credits) and `top_up` (bought credits) add a positive
 * amount; `adjustment` corrects either way. One ledger row with actor and reason; the flag is
 * re-evaluated, so a top-up that covers a call again clears credits_exhausted at once.
 */
export async function changeCredits(
  db: Knex,
  input: AdministrationInput & {
    kind: CreditChangeKind;
    credits: number;
    /** The ledger row's event id, when the change must happen at most once (event ids are unique). */
    eventId?: string;
  },
): Promise<AllowanceSnapshot> {
  if (!Number.isSafeInteger(input.credits) || input.credits === 0) throw new AppError('invalid_params', 'credits must be a non-zero integer', { details: [{ path: 'credits', message: 'a non-zero integer' }] });
  if (input.kind !== 'adjustment' && input.credits < 0) throw new AppError('invalid_params', `a ${input.kind} adds credits: use an adjustment to remove them`, { details: [{ path: 'credits', message: 'must be positive' }] });
  requireReason(input.reason);
  return administer(db, input, async (trx, row, now) => {
    const eventId = input.eventId ?? newId(CREDIT_ID_PREFIX[input.kind]);
    if (input.eventId !== undefined) {
      // Asked again (a retried command): the row is read under the allowance lock, so a change
      // racing this one with the same id has committed or waits for us.
      // The id names the organization and the kind (referencedEventId): only the amount can differ.
      const earlier = await trx('usage_ledger').where({ event_id: eventId }).first<{ entry_type: string; credits_delta: number | string; applied_at: Date } | undefined>('entry_type', 'credits_delta', 'applied_at');
      if (earlier) {
        if (Number(earlier.credits_delta) !== input.credits) {
          throw new AppError('invalid_params', `${eventId} is already on the ledger for a ${earlier.entry_type} of ${earlier.credits_delta} credits (${earlier.applied_at.toISOString()}): a different change needs a reference of its own`, { details: [{ path: 'reference', message: REFERENCE_USED }] });
        }
        return { eventId, changes: {}, alreadyRecordedAt: earlier.applied_at };
      }
    }
    const balance = row.credits_balance + input.credits;
    // Balances are read into JavaScript numbers: past 2^53 they would be shown, summed and
    // compared wrongly, so no change may take a balance there.
    if (!Number.isSafeInteger(balance)) {
      throw new AppError('invalid_params', `the balance would be ${balance > 0 ? 'more' : 'less'} than ${balance > 0 ? '' : '-'}9007199254740991 credits`, { details: [{ path: 'credits', message: 'too large for the balance' }] });
    }
    await trx('usage_ledger').insert({
      event_id: eventId,
      organization_id: row.organization_id,
      entry_type: input.kind,
      source: 'admin',
      quantity: Math.abs(input.credits),
      unit: 'credits',
      credits_delta: input.credits,
      calls_delta: 0,
      credits_balance_after: balance,
      period: row.period,
      occurred_at: now,
      applied_at: now,
      actor: input.actor,
      reason: input.reason,
    });
    return { eventId, changes: { credits_balance: balance } };
  });
}

/**
 * Sets the calls cap (null: no cap) of the current period and, unless `thisPeriodOnly`, the
 * organization's cap for the periods to come. Written to the ledger as an adjustment without
 * deltas, so the history says who changed the cap and why.
 */
export async function setCallsCap(db: Knex, input: AdministrationInput & { callsCap: number | null; thisPeriodOnly?: boolean }): Promise<AllowanceSnapshot> {
  if (input.callsCap !== null && (!Number.isSafeInteger(input.callsCap) || input.callsCap < 0)) {
    throw new AppError('invalid_params', 'the calls cap must be a non-negative integer or none', { details: [{ path: 'callsCap', message: 'a non-negative integer' }] });
  }
  requireReason(input.reason);
  return administer(db, input, async (trx, row, now) => {
    const eventId = newId('cap');
    if (!input.thisPeriodOnly) {
      // The organization's own cap from now on, `none` included (migration 018).
      await trx('organizations').where({ id: row.organization_id }).update({ calls_cap_per_period: input.callsCap, calls_cap_own: true, updated_at: now });
    }
    await trx('usage_ledger').insert(capChangeRow(eventId, row, now, input.actor, systemReason.capChange(row.calls_cap, input.callsCap, input.thisPeriodOnly ?? false, input.reason)));
    return { eventId, changes: { calls_cap: input.callsCap } };
  });
}

// A change of the calls cap in the ledger: an adjustment that moves no credits and no calls, so
// the history says who changed the cap, when and why (the reason says from what to what).
const capChangeRow = (eventId: string, row: AllowanceRow, now: Date, actor: string, reason: string) => ({
  event_id: eventId,
  organization_id: row.organization_id,
  entry_type: 'cap_change',
  source: 'admin',
  quantity: 0,
  credits_delta: 0,
  calls_delta: 0,
  credits_balance_after: row.credits_balance,
  period: row.period,
  occurred_at: now,
  applied_at: now,
  actor,
  reason,
});

/** What usePlanCallsCap did: the allowance after it, and the plan whose cap applies now. */
export type PlanCapSnapshot = AllowanceSnapshot & { planId: string };

/**
 * Drops the organization's own calls cap (setCallsCap's) for its plan's: later months get the
 * plan's cap again, a plan change moves it again, and this month's becomes the plan's. One
 * `cap_change` ledger row says so (reason `calls cap 8 -> 100000: back to the cap of plan
 * standard: why`), even when the number stays (an own cap equal to the plan's), since from then
 * on the cap is the plan's to move. Null, and nothing written, when there is nothing to undo: no
 * own cap, and this month's already the plan's. An organization without a plan has no plan's
 * cap to go back to: refused.
 */
export async function usePlanCallsCap(db: Knex, input: AdministrationInput): Promise<PlanCapSnapshot | null> {
  requireReason(input.reason);
  return db.transaction(async (trx) => {
    // The organization's row first, then the allowance's (administer): the order the operator
    // forms lock them in, so that this and a form saved at once wait for each other, not deadlock.
    const org = await trx('organizations').where({ id: input.organizationId }).forUpdate()
      .first<{ plan_id: string | null; calls_cap_own: boolean } | undefined>('plan_id', 'calls_cap_own');
    if (!org) throw new AppError('not_found', `No organization ${input.organizationId}.`);
    const planId = org.plan_id;
    if (planId === null) {
      throw new AppError('invalid_params', `${input.organizationId} has no plan, so no plan's calls cap to go back to: set a cap, or none.`, { details: [{ path: 'callsCap', message: "the organization has no plan: no plan's cap to go back to" }] });
    }
    const plan = await trx('plans').where({ id: planId }).first<{ calls_cap_per_period: number | null }>('calls_cap_per_period');
    const cap = plan!.calls_cap_per_period;
    let changed = false;
    const snapshot = await administer(trx, input, async (t, row, now) => {
      // Read after the rollover administer may have made: the month's cap as it stands now.
      if (!org.calls_cap_own && row.calls_cap === cap) return { eventId: '', changes: {}, writesNothing: true };
      changed = true;
      const eventId = newId('cap');
      await t('organizations').where({ id: row.organization_id }).update({ calls_cap_per_period: null, calls_cap_own: false, updated_at: now });
      await t('usage_ledger').insert(capChangeRow(eventId, row, now, input.actor, systemReason.capChange(row.calls_cap, cap, false, systemReason.planCapAgain(planId, input.reason))));
      return { eventId, changes: { calls_cap: cap } };
    });
    return changed ? { ...snapshot, planId } : null;
  });
}

/** A usage row the worker charged for a call that was then refused (record-refused-calls.ts). */
export type ChargedRefusal = Pick<LedgerEntry, 'eventId' | 'keyId' | 'product' | 'quantity' | 'unit' | 'creditsDelta' | 'callsDelta' | 'period'> & { organizationId: string };

/** The ledger row that gives back the charge of event `eventId`: one per charge, ever. */
export const refundEventId = (eventId: string) => `adj_refund_${eventId}`;

/**
 * Gives back charges of calls that were refused (503) after the worker had applied their
 * events: per organization, under its allowance lock, one `adjustment` row each (actor
 * `system`) with the opposite deltas, under an id made from the charge's own (refundEventId), so
 * a charge is refunded once however often this runs. The calls count comes back only within the
 * charge's own period (a new period counts afresh). Usage rows stay as they are: the report shows
 * the use, and the refund among the month's adjustments. Returns the event ids refunded now.
 */
export async function refundRefusedCharges(db: Knex, charges: ChargedRefusal[], now: Date = new Date()): Promise<string[]> {
  const refunded: string[] = [];
  // Not Map.groupBy: Node 20 has none.
  const byOrganization = new Map<string, ChargedRefusal[]>();
  for (const charge of charges) byOrganization.set(charge.organizationId, [...(byOrganization.get(charge.organizationId) ?? []), charge]);
  for (const [organizationId, ofOrganization] of byOrganization) {
    const reason = systemReason.refusedCallRefund();
    await administer(db, { organizationId, actor: 'system', reason, now }, async (trx, row, at) => {
      const done = new Set(await trx('usage_ledger').whereIn('event_id', ofOrganization.map((c) => refundEventId(c.eventId))).pluck<string[]>('event_id'));
      let balance = row.credits_balance;
      let callsUsed = row.calls_used;
      const rows = ofOrganization.filter((c) => !done.has(refundEventId(c.eventId))).map((c) => {
        const callsBack = c.period === row.period ? -c.callsDelta : 0;
        balance -= c.creditsDelta;
        callsUsed += callsBack;
        refunded.push(c.eventId);
        return {
          event_id: refundEventId(c.eventId),
          organization_id: organizationId,
          entry_type: 'adjustment',
          source: 'system',
          key_id: c.keyId,
          product: c.product,
          quantity: c.quantity,
          unit: c.unit,
          credits_delta: -c.creditsDelta,
          calls_delta: callsBack,
          credits_balance_after: balance,
          period: row.period,
          occurred_at: at,
          applied_at: at,
          actor: 'system',
          reason,
        };
      });
      if (rows.length === 0) return { eventId: refundEventId(ofOrganization[0]!.eventId), changes: {} };
      await trx('usage_ledger').insert(rows);
      return { eventId: rows[0]!.event_id, changes: { credits_balance: balance, calls_used: callsUsed } };
    });
  }
  return refunded;
}

/** A reason is a line on the ledger, the report, its CSV and the flag history, each time in full. */
export const MAX_REASON = 500;

function requireReason(reason: string): void {
  if (reason.trim() === '') throw new AppError('invalid_params', 'a reason is required: it goes on the ledger', { details: [{ path: 'reason', message: 'required' }] });
  if (reason.length > MAX_REASON) throw new AppError('invalid_params', `The reason must be at most ${MAX_REASON} characters.`, { details: [{ path: 'reason', message: `at most ${MAX_REASON} characters` }] });
  // One line in the report's table, the ledger export's CSV and an operator's terminal.
  if (holdsControlCharacter(reason)) throw new AppError('invalid_params', `The reason ${CONTROL_MESSAGE}.`, { details: [{ path: 'reason', message: CONTROL_MESSAGE }] });
}

/** `writesNothing`: the change turned out to be none (nothing to undo); nothing is written, flags included. */
type Change = (trx: Knex.Transaction, row: AllowanceRow, now: Date) => Promise<{ eventId: string; changes: Partial<AllowanceRow>; alreadyRecordedAt?: Date; writesNothing?: boolean }>;

async function administer(db: Knex, input: AdministrationInput, change: Change): Promise<AllowanceSnapshot> {
  const now = input.now ?? new Date();
  return db.transaction(async (trx) => {
    const current = periodOf(now);
    const locked = await lockAllowances(trx, [input.organizationId], current);
    let row = locked.get(input.organizationId);
    if (!row) throw new AppError('not_found', `No organization ${input.organizationId}.`);
    const cheapest = (await cheapestCreditCalls(trx, [input.organizationId])).get(input.organizationId) ?? null;
    if (row.period < current) row = (await rollOverAllowance(trx, row, current, now, cheapest)).row;
    const { eventId, changes, alreadyRecordedAt, writesNothing } = await change(trx, row, now);
    const next = { ...row, ...changes };
    // A change already made (or none to make) writes nothing, flags included: none would be this command's doing.
    const flags = alreadyRecordedAt || writesNothing
      ? { credits_exhausted: row.credits_exhausted, limit_reached: row.limit_reached }
      : await writeAllowance(trx, row, changes, cheapest, { reason: input.reason, actor: input.actor }, now);
    return {
      organizationId: row.organization_id,
      period: next.period,
      creditsBalance: next.credits_balance,
      callsUsed: next.calls_used,
      callsCap: next.calls_cap,
      creditsExhausted: flags.credits_exhausted,
      limitReached: flags.limit_reached,
      ledgerEventId: eventId,
      ...(alreadyRecordedAt ? { alreadyRecordedAt } : {}),
    };
  });
}

/**
 * Writes `changes` to a locked allowance row with its flags evaluated afresh on the result. Each
 * flag that moves is recorded with `reason`. The flag columns are written when a flag moves or
 * the balance or cap changes: writing them NOTIFYs every API process, whose per-call check reads
 * the balance and cap too (a top-up must serve a dearer call at once, not after the cache's
 * TTL). These changes are people's, so rare; usage batches touch the columns only when a flag
 * moves (apply-usage-batch.ts). Nothing is written when nothing changes.
 */
async function writeAllowance(trx: Knex.Transaction, row: AllowanceRow, changes: Partial<AllowanceRow>, cheapest: number | null, why: { reason: string; actor: string | null }, now: Date): Promise<Flags> {
  const next = { ...row, ...changes };
  const flags = evaluateFlags({ creditsBalance: next.credits_balance, callsUsed: next.calls_used, callsCap: next.calls_cap, cheapestCreditCall: cheapest });
  const diff = flagChanges(row.organization_id, row, flags, why.reason, why.actor);
  if (Object.keys(changes).length === 0 && diff.length === 0) return flags;
  await trx('allowances')
    .where({ organization_id: row.organization_id })
    .update({ ...changes, ...(diff.length > 0 || Object.keys(changes).length > 0 ? flags : {}), updated_at: now });
  await recordFlagChanges(trx, diff, now);
  return flags;
}

/**
 * Re-evaluates an organization's flags under its allowance lock, after something other than its
 * balance or cap changed what they depend on: the price of its cheapest credits-priced product
 * (a product override added, re-priced, disabled or cleared). A flag that changes is recorded
 * with the reason, as every flag change is; nothing else moves.
 */
export async function reevaluateFlags(db: Knex, input: { organizationId: string; reason: string; now?: Date }): Promise<void> {
  const now = input.now ?? new Date();
  await db.transaction(async (trx) => {
    const row = (await lockAllowances(trx, [input.organizationId], periodOf(now))).get(input.organizationId);
    if (!row) return;
    const cheapest = (await cheapestCreditCalls(trx, [input.organizationId])).get(input.organizationId) ?? null;
    await writeAllowance(trx, row, {}, cheapest, { reason: input.reason, actor: null }, now);
  });
}
