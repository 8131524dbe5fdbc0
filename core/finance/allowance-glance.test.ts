import { afterAll, describe, expect, it } from 'vitest';
import { applyUsageBatch } from '../billing/apply-usage-batch.js';
import { createBillingOrg, usageEvent } from '../../test/billing-fixtures.js';
import { testDb } from '../../test/support/database.js';
import { allowanceGlance } from './allowance-glance.js';

const db = testDb({ applicationName: 'allowance-glance.test' });
afterAll(() => db.destroy());

describe('allowance glance: when the credits run out', () => {
  const now = new Date('2026-11-25T15:00:00Z');
  const useFiveCreditsADay = async (credits: number) => {
    const { organizationId } = await createBillingOrg(db, { credits, period: '2026-11' });
    const events = [1, 2, 3, 4, 5, 6, 7].map((d) => usageEvent(organizationId, { occurredAt: new Date(now.getTime() - d * 86_400_000 + 3_600_000).toISOString(), quantity: 5 }));
    await db.transaction((trx) => applyUsageBatch(trx, events.map((value, i) => ({ value, ref: `test#${i}` })), { bus: 'postgres', now }));
    return allowanceGlance(db, organizationId, now);
  };

  it('when the balance lasts a while at the week\'s rate then the date is that far ahead (35 credits over the 6.96 days since the first use: ~199 days)', async () => {
    const glance = await useFiveCreditsADay(1_035);
    expect(glance.creditsBalance).toBe(1_000);
    expect(glance.creditsPerDay).toBe(5);
    expect(glance.creditsRunOutAt?.toISOString().slice(0, 10)).toBe('2027-06-12');
  });

  it('when the balance would last past a century (past what a Date can hold, even) then there is no date', async () => {
    const glance = await useFiveCreditsADay(9_000_000_000_000_000);
    expect(glance.creditsRunOutAt).toBeNull();
  });
});
