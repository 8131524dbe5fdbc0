import { afterAll, describe, expect, it } from 'vitest';
import { applyUsageBatch } from '../billing/apply-usage-batch.js';
import { createBillingOrg, usageEvent } from '../../test/billing-fixtures.js';
import { testDb } from '../../test/support/database.js';
import type { UsageEvent } from '../usage/index.js';
import { usageSince } from './usage-since.js';

const db = testDb({ applicationName: 'usage-since.test' });
afterAll(() => db.destroy());

const apply = (events: UsageEvent[], now: Date) => db.transaction((trx) => applyUsageBatch(trx, events.map((value, i) => ({ value, ref: `test#${i}` })), { bus: 'postgres', now }));

// What summing the ledger from `from` gives: the figure usageSince must match.
async function fromLedger(organizationId: string, from: Date) {
  const row = await db('usage_ledger')
    .where({ organization_id: organizationId, entry_type: 'usage' })
    .andWhere('occurred_at', '>=', from)
    .first<{ credits: number | null; calls: number | null; first: Date | null }>(db.raw('-SUM(credits_delta)::bigint AS credits'), db.raw('SUM(calls_delta)::bigint AS calls'), db.raw('MIN(occurred_at) AS first'));
  return { credits: row?.credits ?? 0, calls: row?.calls ?? 0, first: row?.first ? new Date(row.first) : null };
}

describe('usage since a moment', () => {
  const now = new Date('2026-11-25T15:00:00Z');
  const from = new Date('2026-11-18T15:00:00Z');

  it('when the window starts mid-day then that day comes from the ledger and the rest from the daily buckets, as the ledger sums them', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 10_000, period: '2026-11' });
    const at = (iso: string, overrides: Partial<UsageEvent> = {}) => usageEvent(organizationId, { occurredAt: iso, ...overrides });
    await apply([
      at('2026-11-17T10:00:00.000Z', { quantity: 100 }), // before the window
      at('2026-11-18T14:59:59.999Z', { quantity: 100 }), // the window's first day, before its start
      at('2026-11-18T15:00:00.000Z', { quantity: 5 }),
      at('2026-11-18T23:59:59.999Z', { quantity: 8 }),
      at('2026-11-19T00:00:00.000Z', { quantity: 1, unit: 'calls', product: 'company-report' }),
      at('2026-11-22T12:00:00.000Z', { quantity: 10 }),
      at('2026-11-25T14:00:00.000Z', { quantity: 5, keyId: 'key_other' }),
    ], now);
    const got = await usageSince(db, organizationId, from);
    expect(got).toEqual(await fromLedger(organizationId, from));
    expect(got).toEqual({ credits: 28, calls: 1, first: new Date('2026-11-18T15:00:00.000Z') });
  });

  it('when nothing was used on the first day then the first use is found on the first day that has some', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 10_000, period: '2026-11' });
    await apply([
      usageEvent(organizationId, { occurredAt: '2026-11-21T09:30:00.000Z', quantity: 5 }),
      usageEvent(organizationId, { occurredAt: '2026-11-21T08:15:00.000Z', quantity: 5 }),
      usageEvent(organizationId, { occurredAt: '2026-11-24T10:00:00.000Z', quantity: 8 }),
    ], now);
    const got = await usageSince(db, organizationId, from);
    expect(got).toEqual(await fromLedger(organizationId, from));
    expect(got.first).toEqual(new Date('2026-11-21T08:15:00.000Z'));
  });

  it('when nothing was used then it is zero, with no first use', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 10_000, period: '2026-11' });
    expect(await usageSince(db, organizationId, from)).toEqual({ credits: 0, calls: 0, first: null });
  });
});
