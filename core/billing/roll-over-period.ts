import type { Knex } from 'knex';
import { cheapestCreditCalls, evaluateFlags, flagChanges, recordFlagChanges, type FlagChange } from './allowance-flags.js';
import { lockAllowances, type AllowanceRow } from './allowance-rows.js';
import { nextPeriod, periodOf, periodStart } from './billing-period.js';
import { periodTerms } from './period-terms.js';
import { systemReason } from './system-reasons.js';

/**
 * Moves a locked allowance row forward to `toPeriod` (calendar months, UTC), one ledger row
 * per month crossed: the month's credits are granted (unused credits carry over), calls_used
 * restarts at zero (the ledger row's calls_delta undoes the old month's count, so the ledger
 * still sums to calls_used) and the cap becomes the organization's or its plan's. A cap that
 * moves with it (one set for the old month only, say) is a `cap_change` row in the first month
 * crossed, as every change of the cap in force is, saying where the new one comes from: without
 * it the ledger showed a cap of 12 become 8 with nothing to say why. Flags are then evaluated afresh,
 * which clears them unless the new balance still cannot pay.
 * The ledger row's event id names the organization and month, so a month is granted once
 * even if two processes raced here (they cannot, holding the row lock, but the ledger says so).
 */
export async function rollOverAllowance(trx: Knex.Transaction, row: AllowanceRow, toPeriod: string, now: Date, cheapestCreditCall: number | null): Promise<{ row: AllowanceRow; flagChanges: FlagChange[] }> {
  if (row.period >= toPeriod) return { row, flagChanges: [] };
  const terms = await periodTerms(trx, row.organization_id);
  let balance = row.credits_balance;
  let callsUsed = row.calls_used;
  let period = row.period;
  let capChanged = terms.callsCap !== row.calls_cap;
  while (period < toPeriod) {
    period = nextPeriod(period);
    // A balance kept exact: the grant stops at 2^53 − 1 (reached only by top-ups up to it,
    // as a month grants at most MAX_CREDITS_PER_PERIOD).
    const granted = Math.min(terms.creditsPerPeriod, Number.MAX_SAFE_INTEGER - balance);
    const inserted = await trx('usage_ledger')
      .insert({
        event_id: `rollover_${row.organization_id}_${period}`,
        organization_id: row.organization_id,
        entry_type: 'period_rollover',
        source: 'system',
        quantity: 0,
        credits_delta: granted,
        calls_delta: -callsUsed,
        credits_balance_after: balance + granted,
        period,
        occurred_at: periodStart(period),
        applied_at: now,
        actor: 'system',
        reason: systemReason.rollover(granted),
      })
      .onConflict('event_id')
      .ignore()
      .returning('event_id');
    if (inserted.length === 0) continue;
    balance += granted;
    callsUsed = 0;
    if (capChanged) {
      const from = terms.callsCapOwn ? 'own' : { plan: terms.planId };
      await trx('usage_ledger')
        .insert({
          event_id: `cap_rollover_${row.organization_id}_${period}`,
          organization_id: row.organization_id,
          entry_type: 'cap_change',
          source: 'system',
          quantity: 0,
          credits_delta: 0,
          calls_delta: 0,
          credits_balance_after: balance,
          period,
          occurred_at: periodStart(period),
          applied_at: now,
          actor: 'system',
          reason: systemReason.capChange(row.calls_cap, terms.callsCap, false, systemReason.rolloverCap(period, from)),
        })
        .onConflict('event_id')
        .ignore();
      capChanged = false;
    }
  }
  const flags = evaluateFlags({ creditsBalance: balance, callsUsed, callsCap: terms.callsCap, cheapestCreditCall });
  // The new month's use so far: none, unless its usage was charged before the row moved on
  // (read, not assumed, as the ledger is the record).
  const used = await trx('usage_ledger')
    .where({ organization_id: row.organization_id, period: toPeriod, entry_type: 'usage' })
    .first<{ used: number | null }>(trx.raw('-SUM(credits_delta)::bigint AS used'));
  const creditsUsed = used?.used ?? 0;
  await trx('allowances').where({ organization_id: row.organization_id }).update({
    period: toPeriod,
    credits_balance: balance,
    calls_used: callsUsed,
    credits_used: creditsUsed,
    calls_cap: terms.callsCap,
    ...flags,
    updated_at: now,
  });
  const changes = flagChanges(row.organization_id, row, flags, systemReason.periodRollover(toPeriod));
  await recordFlagChanges(trx, changes, now);
  return { row: { ...row, period: toPeriod, credits_balance: balance, calls_used: callsUsed, credits_used: creditsUsed, calls_cap: terms.callsCap, ...flags }, flagChanges: changes };
}

/**
 * The time-driven rollover: an organization blocked by limit_reached sends no usage, so the
 * new month must not wait for an event to clear its flag. The billing worker runs this on a
 * timer; `cli billing rollover` runs it by hand. Returns how many allowances moved.
 */
export async function rollOverDueAllowances(db: Knex, now: Date = new Date(), chunkSize = 200): Promise<number> {
  const current = periodOf(now);
  let moved = 0;
  for (;;) {
    const due = await db('allowances').where('period', '<', current).orderBy('organization_id').limit(chunkSize).pluck<string[]>('organization_id');
    if (due.length === 0) return moved;
    await db.transaction(async (trx) => {
      const rows = await lockAllowances(trx, due, current);
      const cheapest = await cheapestCreditCalls(trx, due);
      for (const row of rows.values()) {
        if (row.period >= current) continue; // another process got here first
        await rollOverAllowance(trx, row, current, now, cheapest.get(row.organization_id) ?? null);
        moved += 1;
      }
    });
    if (due.length < chunkSize) return moved;
  }
}
