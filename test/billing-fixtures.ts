// Shared set-up for the billing tests: organizations of their own with a plan of their own,
// so test files run in parallel on one database without seeing each other's rows.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { changeCredits } from '../core/billing/adjust-allowance.js';
import { periodOf, periodStart } from '../core/billing/billing-period.js';
import { newId } from '../core/ids/index.js';
import type { UsageEvent } from '../core/usage/index.js';

export interface BillingOrgOptions {
  /** An id chosen beforehand (say, one that usage events named before it existed); default a new one. */
  organizationId?: string;
  credits?: number;
  callsCap?: number | null;
  creditsPerPeriod?: number;
  /** product → [quantity, unit]; default: the spec's four endpoints. */
  measures?: Record<string, [number, 'credits' | 'calls']>;
  period?: string;
  ratePerSecond?: number;
  burst?: number;
}

export const defaultMeasures: Record<string, [number, 'credits' | 'calls']> = {
  'company-report': [1, 'calls'],
  'company-credit-report': [10, 'credits'],
  'company-profile': [8, 'credits'],
  'company-financials': [5, 'credits'],
};

export async function createBillingOrg(db: Knex, options: BillingOrgOptions = {}): Promise<{ organizationId: string; planId: string; keyId: string }> {
  const planId = `test_plan_${randomUUID().slice(0, 8)}`;
  const organizationId = options.organizationId ?? newId('org');
  const keyId = newId('key');
  await db('plans').insert({ id: planId, name: planId, rate_per_second: options.ratePerSecond ?? 1000, burst: options.burst ?? 1000, rate_per_minute: 60_000, credits_per_period: options.creditsPerPeriod ?? 0, calls_cap_per_period: options.callsCap ?? null });
  const measures = options.measures ?? defaultMeasures;
  await db('plan_entitlements').insert(Object.entries(measures).map(([product, [quantity, unit]]) => ({ plan_id: planId, product, product_kind: 'endpoint', quantity, unit })));
  await db('organizations').insert({ id: organizationId, name: `Test ${organizationId}`, plan_id: planId });
  await db('allowances').insert({ organization_id: organizationId, period: options.period ?? periodOf(new Date()), calls_cap: options.callsCap ?? null }).onConflict('organization_id').ignore();
  if (options.credits) await changeCredits(db, { organizationId, kind: 'grant', credits: options.credits, actor: 'test', reason: 'test set-up', now: options.period ? new Date(periodStart(options.period).getTime() + 3_600_000) : undefined });
  return { organizationId, planId, keyId };
}

export function usageEvent(organizationId: string, overrides: Partial<UsageEvent> = {}): UsageEvent {
  return {
    v: 1,
    eventId: `req_${randomUUID()}`,
    organizationId,
    keyId: 'key_test',
    source: 'api',
    product: 'company-financials',
    quantity: 5,
    unit: 'credits',
    occurredAt: new Date().toISOString(),
    ...overrides,
  };
}

export async function allowanceOf(db: Knex, organizationId: string) {
  return db('allowances').where({ organization_id: organizationId }).first<{
    period: string; credits_balance: number; calls_used: number; credits_used: number; calls_cap: number | null; credits_exhausted: boolean; limit_reached: boolean; last_event_at: Date | null;
  }>();
}

export async function ledgerCount(db: Knex, organizationId: string, entryType = 'usage'): Promise<number> {
  const row = await db('usage_ledger').where({ organization_id: organizationId, entry_type: entryType }).count<{ n: string }>({ n: '*' }).first();
  return Number(row?.n ?? 0);
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
