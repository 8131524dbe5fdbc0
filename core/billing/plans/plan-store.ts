import { z } from 'zod';
import type { Db } from '../../db/index.js';
import { AppError, parseInput } from '../../errors/index.js';
import type { RateLimits } from '../../ratelimit/index.js';
import { usageQuantity } from '../../usage/usage-event.js';
import { MAX_CREDITS_PER_PERIOD } from '../period-terms.js';

/** A rate limit (per second, burst, per minute): Postgres keeps it in a 32-bit integer. */
export const MAX_RATE_LIMIT = 2_147_483_647;
export const rateLimitValue = z.number().int().positive().max(MAX_RATE_LIMIT, `at most ${MAX_RATE_LIMIT}`);

const measureFields = {
  quantity: usageQuantity,
  unit: z.enum(['credits', 'calls']),
};

// The refusal of a burst or a per-minute limit below the per-second one (followed by that
// limit in brackets); the dashboard says it in its pages' language (views/invalid-input.ts).
const BELOW_PER_SECOND = 'must be at least the per-second limit';

/**
 * A burst below the per-second rate never holds a second's calls; a minute's calls below it
 * are fewer than one second's: either contradicts the rate it is set with, so both are
 * refused, each naming its field. Null: nothing sets that limit. Applied to a plan's own
 * limits and to an organization's limits once its overrides apply (manage-organizations.ts).
 */
export function refuseContradictoryLimits(
  { perSecond, burst, perMinute }: { perSecond: number | null; burst: number | null; perMinute: number | null },
  ctx: z.RefinementCtx,
): void {
  if (perSecond === null) return;
  for (const [path, value] of [['burst', burst], ['perMinute', perMinute]] as const) {
    if (value !== null && value < perSecond) ctx.addIssue({ code: 'custom', path: [path], message: `${BELOW_PER_SECOND} (${perSecond})` });
  }
}

export const planDefinitionSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/, 'lower-case letters, digits, - and _'),
  name: z.string().min(1),
  limits: z.object({ perSecond: rateLimitValue, burst: rateLimitValue, perMinute: rateLimitValue }).superRefine(refuseContradictoryLimits),
  creditsPerPeriod: z.number().int().nonnegative().max(MAX_CREDITS_PER_PERIOD, `at most ${MAX_CREDITS_PER_PERIOD}`),
  callsCapPerPeriod: z.number().int().nonnegative().nullable(),
  products: z.array(z.object({ product: z.string().min(1), kind: z.enum(['endpoint', 'tool']), ...measureFields })),
});
export type PlanDefinition = z.infer<typeof planDefinitionSchema>;

export interface PlanRow {
  id: string;
  name: string;
  rate_per_second: number;
  burst: number;
  rate_per_minute: number;
  credits_per_period: number;
  calls_cap_per_period: number | null;
}

export function planLimits(row: Pick<PlanRow, 'rate_per_second' | 'burst' | 'rate_per_minute'>): RateLimits {
  return { perSecond: row.rate_per_second, burst: row.burst, perMinute: row.rate_per_minute };
}

/**
 * Creates the plan if missing and adds any of its products it lacks. Existing rows are left
 * as they are, so an operator's later edits to a plan survive re-runs (and concurrent runs).
 */
export async function ensurePlan(db: Db, definition: PlanDefinition): Promise<void> {
  const plan = parseInput(planDefinitionSchema, definition);
  await db.transaction(async (trx) => {
    await trx('plans')
      .insert({
        id: plan.id,
        name: plan.name,
        rate_per_second: plan.limits.perSecond,
        burst: plan.limits.burst,
        rate_per_minute: plan.limits.perMinute,
        credits_per_period: plan.creditsPerPeriod,
        calls_cap_per_period: plan.callsCapPerPeriod,
      })
      .onConflict('id')
      .ignore();
    if (plan.products.length === 0) return;
    await trx('plan_entitlements')
      .insert(plan.products.map((p) => ({ plan_id: plan.id, product: p.product, product_kind: p.kind, quantity: p.quantity, unit: p.unit })))
      .onConflict(['plan_id', 'product'])
      .ignore();
  });
}

export async function listPlans(db: Db): Promise<PlanDefinition[]> {
  const rows = (await db('plans').orderBy('id').select('*')) as PlanRow[];
  const products = await db('plan_entitlements').orderBy(['plan_id', 'product_kind', 'product']).select('*');
  return rows.map((row) => toDefinition(row, products.filter((p) => p.plan_id === row.id)));
}

export async function getPlan(db: Db, planId: string): Promise<PlanDefinition> {
  const row = (await db('plans').where({ id: planId }).first('*')) as PlanRow | undefined;
  if (!row) throw new AppError('not_found', `No plan with id ${planId}.`);
  const products = await db('plan_entitlements').where({ plan_id: planId }).orderBy(['product_kind', 'product']).select('*');
  return toDefinition(row, products);
}

function toDefinition(row: PlanRow, products: { product: string; product_kind: 'endpoint' | 'tool'; quantity: number; unit: 'credits' | 'calls' }[]): PlanDefinition {
  return {
    id: row.id,
    name: row.name,
    limits: planLimits(row),
    creditsPerPeriod: row.credits_per_period,
    callsCapPerPeriod: row.calls_cap_per_period,
    products: products.map((p) => ({ product: p.product, kind: p.product_kind, quantity: p.quantity, unit: p.unit })),
  };
}
