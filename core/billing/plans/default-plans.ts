import type { Db } from '../../db/index.js';
import type { RateLimits } from '../../ratelimit/index.js';
import { productCatalogue } from '../products.js';
import { ensurePlan, type PlanDefinition } from './plan-store.js';

/** Used for organizations without a plan, whose calls are refused but still counted. */
export const defaultRateLimits: RateLimits = { perSecond: 20, burst: 40, perMinute: 600 };

/** Every catalogued endpoint and tool at its default measure. */
export const standardPlan: PlanDefinition = {
  id: 'standard',
  name: 'Standard',
  limits: defaultRateLimits,
  creditsPerPeriod: 100_000,
  callsCapPerPeriod: 100_000,
  products: productCatalogue.map((p) => ({ product: p.slug, kind: p.kind, quantity: p.defaultMeasure.quantity, unit: p.defaultMeasure.unit })),
};

/** Idempotent; run by `npm start`, the CLI and tests. */
export async function ensureDefaultPlans(db: Db): Promise<void> {
  await ensurePlan(db, standardPlan);
}
