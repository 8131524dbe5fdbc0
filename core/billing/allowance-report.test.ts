import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/index.js';
import type { UsageEvent } from '../usage/index.js';
import { allowanceReportCsv } from './allowance-report-csv.js';
import { buildAllowanceReport } from './allowance-report.js';
import { applyUsageBatch } from './apply-usage-batch.js';
import { periodOf, periodStart } from './billing-period.js';
import { changeCredits } from './adjust-allowance.js';
import { recordRefusedCalls } from './record-refused-calls.js';
import { reconcileLedger } from './reconcile-ledger.js';
import { createOrganization } from './plans/manage-organizations.js';

// Usage goes in as the billing worker applies it (applyUsageBatch), on real Postgres.
let db: Db;
beforeAll(() => {
  db = createDb({ connectionString: inject('databaseUrl'), poolMax: 2 });
});
afterAll(async () => {
  await db?.destroy();
});

const event = (organizationId: string, occurredAt: Date): UsageEvent => ({
  v: 1, eventId: `req_${randomUUID()}`, organizationId, keyId: 'key_test', source: 'api', product: 'company-financials', quantity: 5, unit: 'credits', occurredAt: occurredAt.toISOString(),
});
const apply = (events: UsageEvent[], now: Date) =>
  db.transaction((trx) => applyUsageBatch(trx, events.map((e, i) => ({ value: Buffer.from(JSON.stringify(e)), ref: `test#${i}` })), { bus: 'postgres', now }));

describe('allowance report as of', () => {
  it('when an organization has usage in a closed month and in the current one then the closed month is as of its own newest event, not the current month\'s', async () => {
    const org = await createOrganization(db, { name: `Allowance report ${randomUUID()} SRL`, planId: null });
    // The allowance is opened for the real current month, so the months are real ones too.
    const now = new Date();
    const current = periodOf(now);
    const currentStart = periodStart(current);
    const past = periodOf(new Date(currentStart.getTime() - 1));
    const pastNewest = new Date(currentStart.getTime() - 3_600_000);
    const currentNewest = new Date(Math.max(currentStart.getTime(), now.getTime() - 1_000));

    // The current month's call first, then one the closed month had (a late event) and an older one.
    await apply([event(org.id, currentNewest)], now);
    await apply([event(org.id, pastNewest), event(org.id, new Date(currentStart.getTime() - 2 * 86_400_000))], now);

    const closed = await buildAllowanceReport(db, org.id, past, now);
    expect(closed.credits.used).toBe(10);
    expect(closed.asOf).toBe(pastNewest.toISOString());
    expect(allowanceReportCsv(closed)).toContain(`summary,as_of,,${pastNewest.toISOString()},,,,`);
    // The summary's credit rows add up: used is a movement of the balance, as in the table.
    const summary = Object.fromEntries(allowanceReportCsv(closed).filter((l) => l.startsWith('summary,')).map((l) => l.split(',')).map((c) => [c[1], c[3]]));
    expect(summary.used).toBe('-10');
    const movements = ['opening_balance', 'granted', 'topped_up', 'adjusted', 'rollover', 'used'].reduce((n, k) => n + Number(summary[k]), 0);
    expect(movements).toBe(Number(summary.closing_balance));
    expect((await buildAllowanceReport(db, org.id, current, now)).asOf).toBe(currentNewest.toISOString());
    // A month with no usage of its own has no "as of", though later months have usage.
    expect((await buildAllowanceReport(db, org.id, periodOf(new Date(periodStart(past).getTime() - 1)), now)).asOf).toBeNull();
  });
});

describe('allowance report flag history', () => {
  it('when a person\'s top-up clears a flag then the report names them by e-mail, as its credit rows do, not by user id', async () => {
    const org = await createOrganization(db, { name: `Flag actor ${randomUUID()} SRL`, planId: null });
    const now = new Date();
    const userId = `usr_${randomUUID().replaceAll('-', '')}`;
    const email = `finance-${randomUUID().slice(0, 8)}@example.com`;
    await db('users').insert({ id: userId, email });
    // Set as the billing worker sets it when usage leaves too little for the cheapest call.
    await db('allowances').where({ organization_id: org.id }).update({ credits_exhausted: true });
    await changeCredits(db, { organizationId: org.id, kind: 'top_up', credits: 1_000, actor: userId, reason: 'invoice (Nov)', now });

    const report = await buildAllowanceReport(db, org.id, periodOf(now), now);
    expect(report.flagHistory).toEqual([{ at: now.toISOString(), flag: 'credits_exhausted', value: false, reason: 'invoice (Nov)', actor: email }]);
    expect(report.entries.map((e) => e.actor)).toEqual([email]);
    expect(allowanceReportCsv(report)).toContain(`flag,credits_exhausted,${now.toISOString()},,,,cleared: invoice (Nov) (${email}),`);
    expect(JSON.stringify(report)).not.toContain(userId);
  });
});

describe('allowance report calls used', () => {
  it('when a closed month had a call-priced call refunded (refused, 503) within it then its calls used are what its cap counted, as its rollover row closed them', async () => {
    const org = await createOrganization(db, { name: `Calls refunded ${randomUUID()} SRL`, planId: null });
    const now = new Date();
    const past = periodOf(new Date(periodStart(periodOf(now)).getTime() - 1));
    const inPast = new Date(periodStart(past).getTime() + 86_400_000);
    await db('allowances').where({ organization_id: org.id }).update({ period: past });
    const call = () => ({ ...event(org.id, inPast), product: 'company-report', quantity: 1, unit: 'calls' as const });
    const refused = call();
    await apply([call(), refused, call()], inPast);
    expect(await recordRefusedCalls(db, [refused], inPast)).toEqual([refused.eventId]);
    // The next change rolls the allowance over: its rollover row takes back the month's calls used.
    await changeCredits(db, { organizationId: org.id, kind: 'top_up', credits: 10, actor: 'test', reason: 'roll over', now });
    const rollover = await db('usage_ledger').where({ organization_id: org.id, entry_type: 'period_rollover' }).first<{ calls_delta: number }>('calls_delta');
    expect(rollover!.calls_delta).toBe(-2);

    const report = await buildAllowanceReport(db, org.id, past, now);
    expect(report.callsUsed).toBe(2);
    // The usage itself stays: three calls were made, one given back among the adjustments.
    expect(report.byProduct).toEqual([{ source: 'api', product: 'company-report', quantity: 3, unit: 'calls', calls: 3 }]);
    expect(allowanceReportCsv(report)).toContain('summary,calls_used,,2,calls,,,');
    expect((await reconcileLedger(db, { organizationIds: [org.id] })).differences).toEqual([]);
  });
});
