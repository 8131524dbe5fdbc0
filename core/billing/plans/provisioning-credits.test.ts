import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../../db/index.js';
import { periodOf } from '../billing-period.js';
import { reconcileLedger } from '../reconcile-ledger.js';
import { setCallsCap } from '../adjust-allowance.js';
import { rollOverDueAllowances } from '../roll-over-period.js';
import { ensureDefaultPlans, standardPlan } from './default-plans.js';
import { createOrganization, setOrganizationPlan } from './manage-organizations.js';
import { ensurePlan } from './plan-store.js';

// A plan's included credits arrive once a month, however often an organization is provisioned.
const databaseUrl = inject('databaseUrl');
let db: Db;
let included: number;

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
  await ensureDefaultPlans(db);
  included = (await db('plans').where({ id: 'standard' }).first<{ credits_per_period: number }>('credits_per_period'))!.credits_per_period;
  expect(included).toBeGreaterThan(0);
});
afterAll(async () => {
  await db.destroy();
});

const balance = async (organizationId: string) => (await db('allowances').where({ organization_id: organizationId }).first<{ credits_balance: number; period: string }>('credits_balance', 'period'))!;
const grants = (organizationId: string) => db('usage_ledger').where({ organization_id: organizationId }).orderBy('id').select<{ entry_type: string; credits_delta: number; period: string }[]>('entry_type', 'credits_delta', 'period');
const name = () => `Provisioning ${randomUUID()} SRL`;

describe('included credits on provisioning', () => {
  it('when an organization is unprovisioned and provisioned again in the same month, then it gets the month’s credits once', async () => {
    const org = await createOrganization(db, { name: name(), planId: 'standard' });
    expect((await balance(org.id)).credits_balance).toBe(included);

    await setOrganizationPlan(db, org.id, null, 'test');
    await setOrganizationPlan(db, org.id, 'standard', 'test');
    await setOrganizationPlan(db, org.id, null, 'test');
    await setOrganizationPlan(db, org.id, 'standard', 'test');

    expect((await balance(org.id)).credits_balance).toBe(included);
    expect((await grants(org.id)).filter((g) => g.credits_delta > 0)).toHaveLength(1);
    expect((await reconcileLedger(db, { organizationIds: [org.id] })).differences).toEqual([]);
  });

  it('when its included grant was written before grant ids named the month, then re-provisioning does not grant again', async () => {
    const org = await createOrganization(db, { name: name(), planId: 'standard' });
    // As provisioning wrote it until November 2026: a random event id, the same reason.
    await db('usage_ledger').where({ event_id: `grt_included_${org.id}_${periodOf(new Date())}` }).update({ event_id: `grt_${randomUUID()}` });

    await setOrganizationPlan(db, org.id, null, 'test');
    await setOrganizationPlan(db, org.id, 'standard', 'test');

    expect((await balance(org.id)).credits_balance).toBe(included);
    expect((await grants(org.id)).filter((g) => g.credits_delta > 0)).toHaveLength(1);
  });

  it('when an organization created without a plan gets one, then it gets this month’s credits', async () => {
    const org = await createOrganization(db, { name: name(), planId: null });
    expect((await balance(org.id)).credits_balance).toBe(0);
    await setOrganizationPlan(db, org.id, 'standard', 'test');
    expect((await balance(org.id)).credits_balance).toBe(included);
    expect((await reconcileLedger(db, { organizationIds: [org.id] })).differences).toEqual([]);
  });

  it('when its allowance is still in last month as it is provisioned, then the month rolls over on the old terms and the plan’s credits come once', async () => {
    const org = await createOrganization(db, { name: name(), planId: null });
    const now = new Date();
    const lastMonth = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
    await db('allowances').where({ organization_id: org.id }).update({ period: lastMonth });

    await setOrganizationPlan(db, org.id, 'standard', 'test');

    expect(await balance(org.id)).toEqual({ credits_balance: included, period: periodOf(now) });
    expect((await grants(org.id)).map((g) => [g.entry_type, g.credits_delta, g.period])).toEqual([
      ['period_rollover', 0, periodOf(now)],
      ['grant', included, periodOf(now)],
      ['cap_change', 0, periodOf(now)], // the plan's calls cap, where there was none
    ]);
    expect((await reconcileLedger(db, { organizationIds: [org.id] })).differences).toEqual([]);
  });
});

describe('the calls cap when the plan is saved or changed', () => {
  const capOf = async (organizationId: string) => (await db('allowances').where({ organization_id: organizationId }).first<{ calls_cap: number | null }>('calls_cap'))!.calls_cap;
  const capRows = (organizationId: string) => db('usage_ledger').where({ organization_id: organizationId, entry_type: 'cap_change' }).orderBy('id').pluck<string[]>('reason');
  const bigger = { ...standardPlan, id: 'test-cap-250k', name: 'Test cap 250k', callsCapPerPeriod: 250_000 };

  it('when the plan the organization already has is saved again, then its own cap stays and nothing is written', async () => {
    const org = await createOrganization(db, { name: name(), planId: 'standard' });
    await setCallsCap(db, { organizationId: org.id, callsCap: 0, actor: 'test', reason: 'deal: no calls' });
    await setOrganizationPlan(db, org.id, 'standard', 'test');
    expect(await capOf(org.id)).toBe(0);
    expect(await capRows(org.id)).toEqual(['calls cap 100000 -> 0: deal: no calls']);
  });

  it('when it moves to another plan, then the new plan\'s cap applies with a ledger row saying why, unless the organization has a cap of its own', async () => {
    await ensurePlan(db, bigger);
    const plain = await createOrganization(db, { name: name(), planId: 'standard' });
    await setOrganizationPlan(db, plain.id, bigger.id, 'test');
    expect(await capOf(plain.id)).toBe(250_000);
    expect(await capRows(plain.id)).toEqual([`calls cap 100000 -> 250000 (this period only): plan changed from standard to ${bigger.id}`]);

    const own = await createOrganization(db, { name: name(), planId: 'standard' });
    await setCallsCap(db, { organizationId: own.id, callsCap: 7, actor: 'test', reason: 'deal: seven calls' });
    await setOrganizationPlan(db, own.id, bigger.id, 'test');
    expect(await capOf(own.id)).toBe(7);
    expect(await capRows(own.id)).toEqual(['calls cap 100000 -> 7: deal: seven calls']);
    expect((await reconcileLedger(db, { organizationIds: [plain.id, own.id] })).differences).toEqual([]);
  });

  it('when the organization\'s own cap is "no cap" then it stays none through unprovisioning, a new plan and the next rollover', async () => {
    const org = await createOrganization(db, { name: name(), planId: 'standard' });
    await setCallsCap(db, { organizationId: org.id, callsCap: null, actor: 'test', reason: 'deal: unlimited calls' });
    await setOrganizationPlan(db, org.id, null, 'test');
    await setOrganizationPlan(db, org.id, 'standard', 'test');
    expect(await capOf(org.id)).toBeNull();
    await setOrganizationPlan(db, org.id, bigger.id, 'test');
    expect(await capOf(org.id)).toBeNull();

    const now = new Date();
    const lastMonth = periodOf(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 15)));
    await db('allowances').where({ organization_id: org.id }).update({ period: lastMonth });
    await rollOverDueAllowances(db);
    expect(await capOf(org.id)).toBeNull();
    expect(await capRows(org.id)).toEqual(['calls cap 100000 -> none: deal: unlimited calls']);
  });

  it('when an organization without a cap of its own is provisioned again then the plan\'s cap comes back with a ledger row', async () => {
    const org = await createOrganization(db, { name: name(), planId: 'standard' });
    await setCallsCap(db, { organizationId: org.id, callsCap: 5, thisPeriodOnly: true, actor: 'test', reason: 'this month only' });
    await setOrganizationPlan(db, org.id, null, 'test');
    await setOrganizationPlan(db, org.id, 'standard', 'test');
    expect(await capOf(org.id)).toBe(100_000);
    expect(await capRows(org.id)).toEqual(['calls cap 100000 -> 5 (this period only): this month only', 'calls cap 5 -> 100000 (this period only): plan standard']);
    expect((await reconcileLedger(db, { organizationIds: [org.id] })).differences).toEqual([]);
  });
});
