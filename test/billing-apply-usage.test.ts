import { afterAll, describe, expect, it } from 'vitest';
import { changeCredits, setCallsCap } from '../core/billing/adjust-allowance.js';
import { buildAllowanceReport } from '../core/billing/allowance-report.js';
import { applyUsageBatch } from '../core/billing/apply-usage-batch.js';
import { recordRefusedCalls } from '../core/billing/record-refused-calls.js';
import { reconcileLedger } from '../core/billing/reconcile-ledger.js';
import { replayDeadLetters } from '../core/billing/replay-dead-letters.js';
import { rollOverDueAllowances } from '../core/billing/roll-over-period.js';
import { clearProductOverride, setProductOverride } from '../core/billing/plans/manage-organizations.js';
import type { UsageBusMessage } from '../core/usage/index.js';
import { testDb } from './support/database.js';
import { allowanceOf, createBillingOrg, ledgerCount, usageEvent } from './billing-fixtures.js';

const db = testDb({ poolMax: 8 });
afterAll(() => db.destroy());

const asMessages = (values: unknown[]): UsageBusMessage[] => values.map((v, i) => ({ value: Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)), ref: `test#${i}` }));
const apply = (values: unknown[], now?: Date) => db.transaction((trx) => applyUsageBatch(trx, asMessages(values), { bus: 'kafka', now }));
const flagEvents = (organizationId: string) => db('allowance_flag_events').where({ organization_id: organizationId }).orderBy('id').select('flag', 'value');

describe('applying usage batches', () => {
  it('when a batch of paid calls is applied then each has one ledger row and the balance drops by their sum', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const events = [
      usageEvent(organizationId, { product: 'company-financials', quantity: 5 }),
      usageEvent(organizationId, { product: 'company-profile', quantity: 8 }),
      usageEvent(organizationId, { product: 'company-report', quantity: 1, unit: 'calls' }),
    ];
    const outcome = await apply(events);
    expect(outcome).toMatchObject({ applied: 3, duplicates: 0, deadLetters: [] });
    const allowance = await allowanceOf(db, organizationId);
    expect(allowance?.credits_balance).toBe(1_000 - 13);
    expect(allowance?.calls_used).toBe(1);
    expect(allowance?.last_event_at).not.toBeNull();
    expect(await ledgerCount(db, organizationId)).toBe(3);
    const afters = await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'usage' }).orderBy('id').pluck('credits_balance_after');
    expect(afters).toEqual([995, 987, 987]);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);
  });

  it('when the same events are delivered again (alone or twice in a batch) then no balance changes', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const events = [usageEvent(organizationId), usageEvent(organizationId)];
    await apply(events);
    const before = await allowanceOf(db, organizationId);
    const again = await apply([...events, events[0], events[1]]);
    expect(again).toMatchObject({ applied: 0, duplicates: 4 });
    expect(await allowanceOf(db, organizationId)).toEqual(before);
    expect(await ledgerCount(db, organizationId)).toBe(2);
  });

  it('when an event id comes twice in a batch, or after its charge, with different content then the first is charged once and each difference is reported, an identical copy not', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const event = usageEvent(organizationId, { quantity: 5, occurredAt: '2026-11-27T10:00:00.123456Z' });
    const outcome = await apply([event, { ...event, occurredAt: '2026-11-27T11:00:00.123+01:00' }, { ...event, quantity: 7, keyId: 'key_other' }]);
    expect(outcome).toMatchObject({ applied: 1, duplicates: 2, deadLetters: [], conflicts: [{ eventId: event.eventId, ref: 'test#2', differences: 'keyId: key_test → key_other; quantity: 5 → 7' }] });
    const later = await apply([{ ...event, occurredAt: '2026-11-27T10:05:00Z' }]);
    expect(later).toMatchObject({ applied: 0, duplicates: 1, deadLetters: [], conflicts: [{ eventId: event.eventId, ref: 'test#0', differences: 'occurredAt: 2026-11-27T10:00:00.123Z → 2026-11-27T10:05:00Z' }] });
    expect((await apply([event])).conflicts).toEqual([]);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(95);
  });

  it('when a refused call\'s event arrives after its refused row then nothing is charged and no reused id is reported; one with other content still is', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const event = usageEvent(organizationId, { quantity: 5 });
    await recordRefusedCalls(db, [event]);
    expect(await apply([event])).toMatchObject({ applied: 0, duplicates: 1, conflicts: [] });
    expect(await apply([{ ...event, keyId: 'key_other' }])).toMatchObject({ applied: 0, duplicates: 1, conflicts: [{ eventId: event.eventId, differences: 'keyId: key_test → key_other' }] });
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(100);
  });

  it('when a message is malformed or names an unknown organization then it is dead-lettered and the rest of the batch is applied', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const good = usageEvent(organizationId);
    const marker = `poison-${good.eventId}`;
    const outcome = await apply([`{not json ${marker}`, { ...usageEvent(organizationId), v: 2, note: marker }, good, usageEvent(`org_missing_${marker}`)]);
    expect(outcome.applied).toBe(1);
    expect(outcome.deadLetters.map((d) => d.reason)).toEqual([
      'not JSON',
      expect.stringContaining('invalid usage event'),
      expect.stringContaining('unknown organization'),
    ]);
    const rows = await db('usage_dead_letters').where('payload', 'like', `%${marker}%`).select('bus', 'reason');
    expect(rows).toHaveLength(3);
    expect(rows.every((r) => r.bus === 'kafka')).toBe(true);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(95);
  });

  it('when a chunk with dead letters is delivered again (its offset not committed) then each is kept once, and another message from the same source is kept too', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const marker = `again-${usageEvent(organizationId).eventId}`;
    const chunk = (payloads: string[]): UsageBusMessage[] => payloads.map((p, i) => ({ value: Buffer.from(p), ref: `usage-events-${marker}/0@${i}` }));
    // Laid out as no serialiser of ours would: the dead letter must keep the message as it came.
    const unknown = JSON.stringify(usageEvent(`org_missing_${marker}`), null, 2);
    const first = [`{not json ${marker}`, unknown, JSON.stringify(usageEvent(organizationId))];
    const applyChunk = (messages: UsageBusMessage[]) => db.transaction((trx) => applyUsageBatch(trx, messages, { bus: 'kafka' }));
    expect((await applyChunk(chunk(first))).deadLetters).toHaveLength(2);
    // Delivered again: the bus still forwards them (the dead-letter topic takes them at least
    // once), but the table keeps one row each, so nothing is counted twice.
    expect((await applyChunk(chunk(first))).deadLetters).toHaveLength(2);
    const kept = () => db('usage_dead_letters').where('payload', 'like', `%${marker}%`).orderBy('id').pluck<string[]>('source');
    // The unknown organization's event names its message, as a parse failure does.
    expect(await kept()).toEqual([`usage-events-${marker}/0@0`, `usage-events-${marker}/0@1`]);
    expect(await db('usage_dead_letters').where({ source: `usage-events-${marker}/0@1` }).pluck('payload')).toEqual([unknown]);
    // A topic made again starts its offsets at 0: another message at a source already named is
    // another dead letter.
    await applyChunk(chunk([`{still not json ${marker}`]));
    expect(await kept()).toEqual([`usage-events-${marker}/0@0`, `usage-events-${marker}/0@1`, `usage-events-${marker}/0@0`]);
  });

  it('when an event says it happened years ahead (a producer clock far off) then it is a dead letter naming both clocks, the month does not move, and a replay charges it once its time has come', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100, callsCap: 2, creditsPerPeriod: 100_000, period: '2026-11' });
    const now = new Date('2026-11-27T15:00:00Z');
    const future = usageEvent(organizationId, { occurredAt: '2030-06-15T00:00:00Z', quantity: 1, unit: 'calls', product: 'company-report' });
    const today = Array.from({ length: 3 }, () => usageEvent(organizationId, { occurredAt: '2026-11-27T14:59:59Z', quantity: 1, unit: 'calls', product: 'company-report' }));
    const outcome = await apply([future, ...today], now);
    expect(outcome.applied).toBe(3);
    expect(outcome.deadLetters).toEqual([{
      ref: 'test#0',
      value: JSON.stringify(future),
      reason: "occurredAt 2030-06-15T00:00:00Z is 1295 days ahead of the billing worker's clock (2026-11-27T15:00:00.000Z), more than the 5 min allowed: check the clock of the host that produced it (API or tool server); not charged, replay it once that time has passed",
    }]);
    // The month stays, no rollover granted anything, and this month's calls count against its cap.
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-11', credits_balance: 100, calls_used: 3, limit_reached: true });
    expect(await ledgerCount(db, organizationId, 'period_rollover')).toBe(0);
    expect(await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'usage' }).pluck('calls_delta')).toEqual([1, 1, 1]);
    const [dead] = await db('usage_dead_letters').where('payload', 'like', `%${future.eventId}%`).select('id', 'reason');
    expect(dead.reason).toMatch(/^occurredAt 2030-06-15T00:00:00Z is 1295 days ahead .* \(test#0\)$/);

    // Replayed early, it is still refused and stays open; once its time has come, it is charged in its own month, once.
    const early = await replayDeadLetters(db, { ids: [Number(dead.id)], actor: 'test', now });
    expect(early).toEqual([{ id: Number(dead.id), outcome: 'still_failing', eventId: future.eventId, reason: expect.stringMatching(/^occurredAt 2030-06-15T00:00:00Z is 1295 days ahead/) }]);
    const inTime = new Date('2030-06-15T00:00:30Z');
    expect((await replayDeadLetters(db, { ids: [Number(dead.id)], actor: 'test', now: inTime }))[0]).toMatchObject({ outcome: 'charged' });
    expect((await replayDeadLetters(db, { ids: [Number(dead.id)], actor: 'test', now: inTime }))[0]).toMatchObject({ outcome: 'not_open' });
    expect(await db('usage_ledger').where({ event_id: future.eventId }).select('period', 'calls_delta')).toEqual([{ period: '2030-06', calls_delta: 1 }]);
    expect((await apply([future], inTime)).duplicates).toBe(1);
  });

  it('when an event is a few minutes ahead then within the 5 min skew it is charged, and past it it is a dead letter', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const now = new Date();
    const within = usageEvent(organizationId, { occurredAt: new Date(now.getTime() + 4 * 60_000).toISOString() });
    const past = usageEvent(organizationId, { occurredAt: new Date(now.getTime() + 6 * 60_000).toISOString() });
    const outcome = await apply([within, past], now);
    expect(outcome.applied).toBe(1);
    expect(outcome.deadLetters.map((d) => d.reason)).toEqual([expect.stringMatching(/^occurredAt \S+ is 6 min ahead of the billing worker's clock/)]);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(95);
  });

  it('when an event says it happened before 2000 then it is a dead letter, while a late event of weeks ago is charged in its own (closed) month', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100, period: '2026-11' });
    const now = new Date('2026-11-27T15:00:00Z');
    const ancient = ['1900-01-01T00:00:00Z', '0001-01-01T00:00:00Z', '1970-01-01T00:00:00Z', '1999-12-31T23:59:59Z'].map((occurredAt) => usageEvent(organizationId, { occurredAt }));
    const late = usageEvent(organizationId, { occurredAt: '2026-10-05T08:00:00Z' });
    const outcome = await apply([...ancient, late], now);
    expect(outcome.applied).toBe(1);
    expect(outcome.deadLetters.map((d) => d.reason)).toEqual(ancient.map((e) => `occurredAt ${e.occurredAt} is before 2000-01-01, when no call of this service happened: check the clock of the host that produced it (API or tool server); not charged`));
    expect(await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'usage' }).pluck('period')).toEqual(['2026-10']);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(95);
  });

  it('when an event’s quantity is above 10^9 then it is a dead letter, and a price above it cannot be set, so every sum stays exact', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100, period: '2026-11' });
    const now = new Date('2026-11-27T15:00:00Z');
    const huge = usageEvent(organizationId, { quantity: Number.MAX_SAFE_INTEGER, occurredAt: '2026-11-27T14:00:00Z' });
    const most = usageEvent(organizationId, { quantity: 1_000_000_000, occurredAt: '2026-11-27T14:00:00Z' });
    const outcome = await apply([huge, most], now);
    expect(outcome.applied).toBe(1);
    expect(outcome.deadLetters.map((d) => d.reason)).toEqual(['invalid usage event: quantity: at most 1000000000']);
    const report = await buildAllowanceReport(db, organizationId, '2026-11', now);
    expect(report.credits.used).toBe(1_000_000_000);
    expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(100 - 1_000_000_000);
    await expect(setProductOverride(db, organizationId, 'company-profile', { quantity: 1_000_000_001, unit: 'credits' })).rejects.toMatchObject({ code: 'invalid_params', message: expect.stringContaining('at most 1000000000') });
  });

  it('when a text field holds an unpaired surrogate then the event is a dead letter naming the field, kept as it came, instead of charged under a key id Postgres changed to U+FFFD', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100 });
    const event = usageEvent(organizationId);
    // As a producer would write it: JSON carries the half character as an escape.
    const text = JSON.stringify(event).replace('"keyId":"key_test"', '"keyId":"k\\ud800x"');
    const outcome = await apply([text, usageEvent(organizationId)]);
    expect(outcome.applied).toBe(1);
    expect(outcome.deadLetters.map((d) => d.reason)).toEqual(['invalid usage event: keyId: holds an unpaired UTF-16 surrogate (\\ud800): the text was cut inside a character; fix or remove it']);
    const [row] = await db('usage_dead_letters').where('payload', 'like', `%${event.eventId}%`).select('payload');
    expect(row.payload).toBe(text);
    expect(await db('usage_ledger').where({ event_id: event.eventId }).pluck('id')).toEqual([]);
  });

  it('when the balance falls below the cheapest credits-priced call then credits_exhausted is set, and a top-up that covers a call clears it', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 12 });
    await apply([usageEvent(organizationId, { quantity: 5 })]); // 7 left: a 5-credit call is still payable
    expect((await allowanceOf(db, organizationId))?.credits_exhausted).toBe(false);
    await apply([usageEvent(organizationId, { quantity: 5 })]); // 2 left: below the cheapest (5)
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 2, credits_exhausted: true });
    await changeCredits(db, { organizationId, kind: 'top_up', credits: 2, actor: 'test', reason: 'not enough yet' });
    expect((await allowanceOf(db, organizationId))?.credits_exhausted).toBe(true);
    const snapshot = await changeCredits(db, { organizationId, kind: 'top_up', credits: 100, actor: 'test', reason: 'customer paid' });
    expect(snapshot).toMatchObject({ creditsBalance: 104, creditsExhausted: false });
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: 104, credits_exhausted: false });
    expect(await flagEvents(organizationId)).toEqual([
      { flag: 'credits_exhausted', value: true },
      { flag: 'credits_exhausted', value: false },
    ]);
    const topUp = await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'top_up' }).orderBy('id').select('credits_delta', 'actor', 'reason');
    expect(topUp).toEqual([{ credits_delta: 2, actor: 'test', reason: 'not enough yet' }, { credits_delta: 100, actor: 'test', reason: 'customer paid' }]);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);
  });

  it('when a served call costs more than the balance then it is still charged (the balance goes below zero) and the flag is set', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 6 });
    await apply([usageEvent(organizationId, { product: 'company-credit-report', quantity: 10 })]);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ credits_balance: -4, credits_exhausted: true });
  });

  it('when calls_used reaches the cap then limit_reached is set, and raising the cap clears it', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 100, callsCap: 3 });
    const call = () => usageEvent(organizationId, { product: 'company-report', quantity: 1, unit: 'calls' });
    await apply([call(), call()]);
    expect((await allowanceOf(db, organizationId))?.limit_reached).toBe(false);
    await apply([call()]);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ calls_used: 3, limit_reached: true, credits_exhausted: false });
    await setCallsCap(db, { organizationId, callsCap: 10, actor: 'test', reason: 'upgrade' });
    expect(await allowanceOf(db, organizationId)).toMatchObject({ calls_cap: 10, limit_reached: false });
    expect((await db('organizations').where({ id: organizationId }).first()).calls_cap_per_period).toBe(10);
    expect(await flagEvents(organizationId)).toEqual([{ flag: 'limit_reached', value: true }, { flag: 'limit_reached', value: false }]);
  });

  it('when the calendar month changes then the rollover grants the period credits, restarts the calls count, clears the flags and the ledger still reconciles', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 10, callsCap: 1, creditsPerPeriod: 500, period: '2026-01' });
    const january = new Date('2026-01-20T10:00:00Z');
    await apply([
      usageEvent(organizationId, { occurredAt: january.toISOString(), quantity: 8, product: 'company-profile' }),
      usageEvent(organizationId, { occurredAt: january.toISOString(), quantity: 1, unit: 'calls', product: 'company-report' }),
    ], january);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-01', credits_balance: 2, calls_used: 1, credits_exhausted: true, limit_reached: true });

    // No traffic while blocked: the time-driven sweep must open February by itself.
    const february = new Date('2026-02-01T00:00:05Z');
    expect(await rollOverDueAllowances(db, february)).toBeGreaterThanOrEqual(1);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-02', credits_balance: 502, calls_used: 0, calls_cap: 1, credits_exhausted: false, limit_reached: false });
    // A late January event pays its credits but does not count against February's cap.
    await apply([usageEvent(organizationId, { occurredAt: '2026-01-31T23:59:59.000Z', quantity: 1, unit: 'calls', product: 'company-report' })], february);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ calls_used: 0, limit_reached: false });
    // An event from March (the API's clock 31 s ahead, within the skew allowed) opens March before it is applied.
    await apply([usageEvent(organizationId, { occurredAt: '2026-03-01T00:00:01.000Z', quantity: 5 })], new Date('2026-02-28T23:59:30Z'));
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-03', credits_balance: 997 });
    expect(await ledgerCount(db, organizationId, 'period_rollover')).toBe(2);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);
    // January's report counts the late call as January's: its calls used equal its calls-priced
    // usage by product, although the call no longer counted against a cap.
    const report = await buildAllowanceReport(db, organizationId, '2026-01', february);
    expect(report.byProduct.find((p) => p.product === 'company-report')).toMatchObject({ quantity: 2, unit: 'calls', calls: 2 });
    expect(report.callsUsed).toBe(2);
  });

  it('when a balance a top-up took to within 5 of 2^53 − 1 rolls over then the month grants 5, not its 1,000, and the ledger still reconciles', async () => {
    const top = Number.MAX_SAFE_INTEGER - 5;
    const { organizationId } = await createBillingOrg(db, { credits: top, creditsPerPeriod: 1_000, period: '2026-01' });
    expect(await rollOverDueAllowances(db, new Date('2026-03-01T00:00:05Z'))).toBeGreaterThanOrEqual(1);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-03', credits_balance: Number.MAX_SAFE_INTEGER });
    expect(await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'period_rollover' }).orderBy('period').select('period', 'credits_delta', 'credits_balance_after', 'reason')).toEqual([
      { period: '2026-02', credits_delta: 5, credits_balance_after: Number.MAX_SAFE_INTEGER, reason: 'calendar month rollover: 5 credits granted, calls count restarts' },
      { period: '2026-03', credits_delta: 0, credits_balance_after: Number.MAX_SAFE_INTEGER, reason: 'calendar month rollover: 0 credits granted, calls count restarts' },
    ]);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);
  });

  it('when usage is applied then credits_used counts the month’s own credits: a late event of a closed month pays but is not this month’s use, and a rollover restarts it', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000, creditsPerPeriod: 0, period: '2026-01' });
    const january = new Date('2026-01-20T10:00:00Z');
    await apply([
      usageEvent(organizationId, { occurredAt: january.toISOString(), quantity: 8, product: 'company-profile' }),
      usageEvent(organizationId, { occurredAt: january.toISOString(), quantity: 1, unit: 'calls', product: 'company-report' }),
      usageEvent(organizationId, { occurredAt: january.toISOString(), quantity: 5 }),
    ], january);
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-01', credits_balance: 987, credits_used: 13 });

    const february = new Date('2026-02-03T00:00:00Z');
    await apply([
      usageEvent(organizationId, { occurredAt: '2026-01-31T23:59:59.000Z', quantity: 10, product: 'company-credit-report' }),
      usageEvent(organizationId, { occurredAt: february.toISOString(), quantity: 5 }),
    ], february);
    // The batch opened February; January's late 10 credits are paid, February has used 5.
    expect(await allowanceOf(db, organizationId)).toMatchObject({ period: '2026-02', credits_balance: 972, credits_used: 5 });
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);
  });

  it('when usage is applied then its daily buckets add up to its ledger rows, and redelivered events add nothing', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const day1 = '2026-11-03T23:59:59.999Z';
    const day2 = '2026-11-04T00:00:00.000Z';
    const first = [
      usageEvent(organizationId, { occurredAt: day1, quantity: 5 }),
      usageEvent(organizationId, { occurredAt: day1, quantity: 5 }),
      usageEvent(organizationId, { occurredAt: day1, quantity: 5, keyId: 'key_other' }),
      usageEvent(organizationId, { occurredAt: day2, quantity: 1, unit: 'calls', product: 'company-report' }),
    ];
    await apply(first, new Date('2026-11-04T01:00:00Z'));
    // A redelivery of two of them with one new event: the batch takes the path that drops the
    // already-charged events and inserts the rest.
    await apply([first[0], first[3], usageEvent(organizationId, { occurredAt: day2, quantity: 8, product: 'company-profile', source: 'mcp' })], new Date('2026-11-04T01:00:00Z'));
    const buckets = await db('usage_daily')
      .where({ organization_id: organizationId })
      .orderBy(['day', 'source', 'product', 'key_id'])
      .select(db.raw(`to_char(day, 'YYYY-MM-DD') AS day`), 'period', 'source', 'product', 'key_id', 'unit', 'quantity', 'calls', 'credits_delta', 'calls_delta');
    expect(buckets).toEqual([
      { day: '2026-11-03', period: '2026-11', source: 'api', product: 'company-financials', key_id: 'key_other', unit: 'credits', quantity: 5, calls: 1, credits_delta: -5, calls_delta: 0 },
      { day: '2026-11-03', period: '2026-11', source: 'api', product: 'company-financials', key_id: 'key_test', unit: 'credits', quantity: 10, calls: 2, credits_delta: -10, calls_delta: 0 },
      { day: '2026-11-04', period: '2026-11', source: 'api', product: 'company-report', key_id: 'key_test', unit: 'calls', quantity: 1, calls: 1, credits_delta: 0, calls_delta: 1 },
      { day: '2026-11-04', period: '2026-11', source: 'mcp', product: 'company-profile', key_id: 'key_test', unit: 'credits', quantity: 8, calls: 1, credits_delta: -8, calls_delta: 0 },
    ]);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toEqual([]);

    // A bucket that no longer adds up is reported.
    await db('usage_daily').where({ organization_id: organizationId, key_id: 'key_other' }).increment('quantity', 1);
    expect((await reconcileLedger(db, { organizationIds: [organizationId] })).differences).toMatchObject([{ organizationId, dailyBucketsOff: 1 }]);
  });

  it('when several workers apply overlapping organizations in parallel then none deadlocks and every charge lands once', async () => {
    const orgs = await Promise.all(Array.from({ length: 6 }, () => createBillingOrg(db, { credits: 1_000_000 })));
    const events = Array.from({ length: 1_200 }, (_, i) => usageEvent(orgs[i % orgs.length]!.organizationId, { quantity: 1 + (i % 7) }));
    // Six batches, each a shuffled mix of every organization, some events in two batches.
    const batches = Array.from({ length: 6 }, (_, b) => [...events.slice(b * 200, b * 200 + 200), ...events.slice(((b + 1) % 6) * 200, ((b + 1) % 6) * 200 + 20)].sort(() => Math.random() - 0.5));
    const outcomes = await Promise.all(batches.map((batch) => apply(batch)));
    expect(outcomes.reduce((n, o) => n + o.applied, 0)).toBe(1_200);
    expect(outcomes.reduce((n, o) => n + o.duplicates, 0)).toBe(120);
    for (const { organizationId } of orgs) {
      const spent = events.filter((e) => e.organizationId === organizationId).reduce((n, e) => n + e.quantity, 0);
      expect((await allowanceOf(db, organizationId))?.credits_balance).toBe(1_000_000 - spent);
    }
    expect((await reconcileLedger(db, { organizationIds: orgs.map((o) => o.organizationId) })).differences).toEqual([]);
  });

  it('when reconcile finds an allowance that disagrees with its ledger then it reports the difference', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 50 });
    await db('allowances').where({ organization_id: organizationId }).update({ credits_balance: 49 });
    const result = await reconcileLedger(db, { organizationIds: [organizationId] });
    expect(result.differences).toEqual([{ organizationId, creditsBalance: 49, ledgerCredits: 50, callsUsed: 0, ledgerCalls: 0, creditsUsed: 0, ledgerCreditsUsed: 0, dailyBucketsOff: 0 }]);
  });

  it('when an allowance’s credits used disagree with its month’s usage rows then reconcile reports that too', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 50 });
    await apply([usageEvent(organizationId, { quantity: 5 })]);
    await db('allowances').where({ organization_id: organizationId }).update({ credits_used: 4 });
    const result = await reconcileLedger(db, { organizationIds: [organizationId] });
    expect(result.differences).toEqual([{ organizationId, creditsBalance: 45, ledgerCredits: 45, callsUsed: 0, ledgerCalls: 0, creditsUsed: 4, ledgerCreditsUsed: 5, dailyBucketsOff: 0 }]);
  });
});

describe('flags when a product override changes the cheapest price', () => {
  it('then credits_exhausted follows at once, both ways, with a flag event saying why', async () => {
    // Priced 5 (financials) and 10 (credit report): a balance of 3 pays for neither.
    const { organizationId } = await createBillingOrg(db, { credits: 3, measures: { 'company-financials': [5, 'credits'], 'company-credit-report': [10, 'credits'] } });
    await setProductOverride(db, organizationId, 'company-financials', { enabled: true, quantity: 2, unit: 'credits' });
    expect((await allowanceOf(db, organizationId))?.credits_exhausted).toBe(false);
    await clearProductOverride(db, organizationId, 'company-financials');
    expect((await allowanceOf(db, organizationId))?.credits_exhausted).toBe(true);
    await setProductOverride(db, organizationId, 'company-profile', { enabled: true, quantity: 1, unit: 'credits' });
    expect((await allowanceOf(db, organizationId))?.credits_exhausted).toBe(false);
    await setProductOverride(db, organizationId, 'company-profile', { enabled: false });
    expect((await allowanceOf(db, organizationId))?.credits_exhausted).toBe(true);
    const events = await db('allowance_flag_events').where({ organization_id: organizationId, flag: 'credits_exhausted' }).orderBy('id').select('value', 'reason');
    expect(events.slice(-3)).toEqual([
      { value: true, reason: 'product company-financials back to the plan' },
      { value: false, reason: 'product company-profile changed' },
      { value: true, reason: 'product company-profile changed' },
    ]);
  });
});
