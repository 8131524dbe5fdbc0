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

  it('when the worker charged an event before its refusal could be recorded then that id is returned, and logged at error for refund', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const [early, late] = [usageEvent(organizationId), usageEvent(organizationId)];
    await apply([early]);
    expect(await recordRefusedCalls(db, [early, late])).toEqual([early.eventId]);

    const lines: { level: string; msg: string; eventIds?: string[] }[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line)) });
    const [again, another] = [usageEvent(organizationId), usageEvent(organizationId)];
    await apply([again]);
    await settleRefusedCalls([again, another], (events) => recordRefusedCalls(db, events), logger, 'Kafka topic');
    expect(lines.filter((l) => l.level === 'error')).toEqual([expect.objectContaining({ msg: 'usage events of calls refused (503) were charged before their refusal could be recorded: refund them', eventIds: [again.eventId] })]);
    // Without a ledger to write to, every id is logged for refund.
    lines.length = 0;
    await settleRefusedCalls([another], () => Promise.reject(new Error('database unreachable')), logger, 'Kafka topic');
    expect(lines).toEqual([expect.objectContaining({ level: 'error', eventIds: [another.eventId], err: 'database unreachable' })]);
  });
});
