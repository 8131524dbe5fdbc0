import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../../db/index.js';
import { periodOf } from '../billing-period.js';
import { reconcileLedger } from '../reconcile-ledger.js';
import { ensureDefaultPlans } from './default-plans.js';
import { createOrganization, setOrganizationPlan } from './manage-organizations.js';

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
    ]);
    expect((await reconcileLedger(db, { organizationIds: [org.id] })).differences).toEqual([]);
  });
});
