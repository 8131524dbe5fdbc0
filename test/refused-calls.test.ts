import { afterAll, describe, expect, it } from 'vitest';
import { applyUsageBatch } from '../core/billing/apply-usage-batch.js';
import { recordRefusedCalls } from '../core/billing/index.js';
import { reconcileLedger } from '../core/billing/reconcile-ledger.js';
import { createLogger } from '../core/logging/index.js';
import { settleRefusedCalls, type UsageEvent } from '../core/usage/index.js';
import { allowanceOf, createBillingOrg, ledgerCount, usageEvent } from './billing-fixtures.js';
import { testDb } from './support/database.js';

// A call refused (503) whose usage event still reaches the bus afterwards (a stalled broker or
// database stores it late) must not be charged: its `refused` ledger row, written at the
// refusal, takes the event's id first. Against real PostgreSQL and the worker's own apply.
const db = testDb({ poolMax: 2 });
afterAll(() => db.destroy());

const apply = (events: UsageEvent[]) =>
  db.transaction((trx) => applyUsageBatch(trx, events.map((e, i) => ({ value: Buffer.from(JSON.stringify(e)), ref: `test#${i}` })), { bus: 'kafka' }));

describe('calls refused while their usage events may still arrive', () => {
  it('when the refusal is recorded before the event arrives then the worker charges nothing for it, and the ledger still reconciles', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const refused = [usageEvent(organizationId), usageEvent(organizationId, { product: 'company-report', quantity: 1, unit: 'calls' })];
    expect(await recordRefusedCalls(db, refused)).toEqual([]);
    // The stalled bus delivers them after all, next to a call that was served.
    const served = usageEvent(organizationId);
    const outcome = await apply([...refused, served]);
    expect(outcome.appliedEventIds).toEqual([served.eventId]);
    expect(outcome.duplicates).toBe(2);
    const allowance = await allowanceOf(db, organizationId);
    expect([allowance.credits_balance, allowance.calls_used]).toEqual([95, 0]);
    expect(await ledgerCount(db, organizationId, 'refused')).toBe(2);
    const rows = await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'refused' }).orderBy('id').select('event_id', 'credits_delta', 'calls_delta', 'quantity', 'reason');
    expect(rows).toEqual([
      { event_id: refused[0]!.eventId, credits_delta: 0, calls_delta: 0, quantity: 0, reason: 'call refused (503) before its usage event was confirmed: 5 credits for company-financials, not charged' },
      { event_id: refused[1]!.eventId, credits_delta: 0, calls_delta: 0, quantity: 0, reason: 'call refused (503) before its usage event was confirmed: 1 calls for company-report, not charged' },
    ]);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);
    // Recorded twice (a retried settle): nothing more.
    expect(await recordRefusedCalls(db, refused)).toEqual([]);
    expect(await ledgerCount(db, organizationId, 'refused')).toBe(2);
  });

  it('when the worker charged an event before its refusal could be recorded then the charge is refunded once, the calls count too, and the ledger reconciles', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const early = usageEvent(organizationId);
    const earlyCall = usageEvent(organizationId, { product: 'company-report', quantity: 1, unit: 'calls' });
    const late = usageEvent(organizationId);
    await apply([early, earlyCall]);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 95, calls_used: 1 });

    expect((await recordRefusedCalls(db, [early, earlyCall, late])).sort()).toEqual([early.eventId, earlyCall.eventId].sort());
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 100, calls_used: 0 });
    const refunds = await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'adjustment' }).orderBy('credits_delta').select('event_id', 'source', 'product', 'quantity', 'unit', 'credits_delta', 'calls_delta', 'actor', 'reason');
    expect(refunds).toEqual([
      { event_id: `adj_refund_${earlyCall.eventId}`, source: 'system', product: 'company-report', quantity: 1, unit: 'calls', credits_delta: 0, calls_delta: -1, actor: 'system', reason: 'refund: call refused (503) after it was charged' },
      { event_id: `adj_refund_${early.eventId}`, source: 'system', product: 'company-financials', quantity: 5, unit: 'credits', credits_delta: 5, calls_delta: 0, actor: 'system', reason: 'refund: call refused (503) after it was charged' },
    ]);
    // Settled again (the batch landed after all) and the late event applied: nothing more.
    expect(await recordRefusedCalls(db, [early, earlyCall, late])).toEqual([]);
    expect((await apply([late])).appliedEventIds).toEqual([]);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 100, calls_used: 0 });
    expect(await ledgerCount(db, organizationId, 'adjustment')).toBe(2);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);
  });

  it('when a refund clears credits_exhausted then the flag is cleared with the refund as its reason', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 5 });
    const charged = usageEvent(organizationId);
    await apply([charged]);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 0, credits_exhausted: true });
    await recordRefusedCalls(db, [charged]);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 5, credits_exhausted: false });
    const flagEvents = await db('allowance_flag_events').where({ organization_id: organizationId }).orderBy('id').select('flag', 'value', 'reason', 'actor');
    expect(flagEvents.at(-1)).toEqual({ flag: 'credits_exhausted', value: false, reason: 'refund: call refused (503) after it was charged', actor: 'system' });
  });

  it('when refused calls are settled then those already charged are logged as refunded, and without a ledger every id is logged at error', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const lines: { level: string; msg: string; eventIds?: string[] }[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line)) });
    const [again, another] = [usageEvent(organizationId), usageEvent(organizationId)];
    await apply([again]);
    await settleRefusedCalls([again, another], (events) => recordRefusedCalls(db, events), logger, 'Kafka topic');
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'usage events of calls refused (503) had been charged before their refusal was recorded: refunded (ledger adjustments)', eventIds: [again.eventId] }));
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 100 });
    // Without a ledger to write to, every id is logged for refund.
    lines.length = 0;
    await settleRefusedCalls([another], () => Promise.reject(new Error('database unreachable')), logger, 'Kafka topic');
    expect(lines).toEqual([expect.objectContaining({ level: 'error', eventIds: [another.eventId], err: 'database unreachable' })]);
  });
});
