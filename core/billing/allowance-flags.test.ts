import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/index.js';
import { creditPrices } from './allowance-flags.js';
import { defaultRateLimits } from './plans/default-plans.js';
import { createOrganization, getOrganization, setOrganizationPlan, setProductOverride } from './plans/manage-organizations.js';
import { ensurePlan } from './plans/plan-store.js';

// The prices the flags and the API's balance re-reads are judged by are the organization's
// products as the access control resolves them, overrides of products the plan lacks included.
const databaseUrl = inject('databaseUrl');
let db: Db;
const planId = `flags-${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
  // 3 credits a month, and only a call-priced product: nothing in it is priced in credits.
  await ensurePlan(db, {
    id: planId, name: 'Flags test', limits: defaultRateLimits, creditsPerPeriod: 3, callsCapPerPeriod: null,
    products: [{ product: 'company-report', kind: 'endpoint', quantity: 1, unit: 'calls' }],
  });
});
afterAll(async () => {
  await db.destroy();
});

describe('credit prices of an organization', () => {
  it('when an override adds a product the plan lacks at its catalogue price, then that price counts, as the access control charges it, and the flag says 3 credits cannot pay it', async () => {
    const org = await createOrganization(db, { name: `Flags ${randomUUID()} SRL`, planId });
    expect((await creditPrices(db, [org.id])).get(org.id)).toEqual([]);

    // Financials without a measure of its own: the catalogue's 5 credits.
    await setProductOverride(db, org.id, 'company-financials', { enabled: true });
    const charged = (await getOrganization(db, org.id)).products.get('company-financials')?.measure;
    expect(charged).toEqual({ quantity: 5, unit: 'credits' });
    expect((await creditPrices(db, [org.id])).get(org.id)).toEqual([5]);
    expect(await db('allowances').where({ organization_id: org.id }).first('credits_balance', 'credits_exhausted'))
      .toEqual({ credits_balance: 3, credits_exhausted: true });

    // A measure of its own, and another product at a price of its own: cheapest first.
    await setProductOverride(db, org.id, 'service_search_companies', { enabled: true, quantity: 2, unit: 'credits' });
    expect((await creditPrices(db, [org.id])).get(org.id)).toEqual([2, 5]);
    expect(await db('allowances').where({ organization_id: org.id }).first('credits_exhausted')).toEqual({ credits_exhausted: false });
  });
});

describe('a change of plan', () => {
  it('when an organization with 5 credits moves from a plan whose calls cost 10 credits to one whose calls cost 1, then credits_exhausted is cleared at once, and set again on the way back, each change recorded with the plan change as its reason', async () => {
    const suffix = randomUUID().slice(0, 8);
    const dear = `dear-${suffix}`;
    const cheap = `cheap-${suffix}`;
    // The same call cap (none) on both: no cap change to re-judge the flags on the way.
    for (const [id, credits] of [[dear, 10], [cheap, 1]] as const) {
      await ensurePlan(db, {
        id, name: `Plan ${id}`, limits: defaultRateLimits, creditsPerPeriod: 5, callsCapPerPeriod: null,
        products: [{ product: 'company-financials', kind: 'endpoint', quantity: credits, unit: 'credits' }],
      });
    }
    const org = await createOrganization(db, { name: `Plan change ${randomUUID()} SRL`, planId: dear });
    const flags = () => db('allowances').where({ organization_id: org.id }).first('credits_balance', 'credits_exhausted');
    expect(await flags()).toEqual({ credits_balance: 5, credits_exhausted: true });

    await setOrganizationPlan(db, org.id, cheap, 'test');
    expect(await flags()).toEqual({ credits_balance: 5, credits_exhausted: false });
    await setOrganizationPlan(db, org.id, dear, 'test');
    expect(await flags()).toEqual({ credits_balance: 5, credits_exhausted: true });
    expect(await db('allowance_flag_events').where({ organization_id: org.id, flag: 'credits_exhausted' }).orderBy('id').select('value', 'reason')).toEqual([
      { value: true, reason: expect.any(String) },
      { value: false, reason: `plan changed from ${dear} to ${cheap}` },
      { value: true, reason: `plan changed from ${cheap} to ${dear}` },
    ]);
  });
});
