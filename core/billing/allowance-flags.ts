import type { Knex } from 'knex';
import { effectiveProducts, OVERRIDES_JSON, PLAN_PRODUCTS_JSON, type PlanProduct, type ProductOverride } from './plans/effective-products.js';

export type AllowanceFlag = 'credits_exhausted' | 'limit_reached';

export interface FlagInputs {
  creditsBalance: number;
  callsUsed: number;
  callsCap: number | null;
  /**
   * The cheapest credits-priced call the organization may make (null: none is priced in
   * credits). The flag is raised only when not even that call can be paid, so a balance that
   * covers some call never refuses it; the price of this choice is that a dearer call may take
   * the balance below zero by less than its own price (see docs/billing.md, overspend).
   */
  cheapestCreditCall: number | null;
}

export interface Flags {
  credits_exhausted: boolean;
  limit_reached: boolean;
}

export function evaluateFlags(inputs: FlagInputs): Flags {
  const threshold = inputs.cheapestCreditCall ?? 1;
  return {
    credits_exhausted: inputs.creditsBalance < threshold,
    limit_reached: inputs.callsCap !== null && inputs.callsUsed >= inputs.callsCap,
  };
}

export interface FlagChange {
  organizationId: string;
  flag: AllowanceFlag;
  value: boolean;
  reason: string;
  /** Who made the change that moved it (`usr_…`, `cli:…`); null when the system did (usage, rollover). */
  actor: string | null;
}

export function flagChanges(organizationId: string, before: Flags, after: Flags, reason: string, actor: string | null = null): FlagChange[] {
  const changes: FlagChange[] = [];
  for (const flag of ['credits_exhausted', 'limit_reached'] as const) {
    if (before[flag] !== after[flag]) changes.push({ organizationId, flag, value: after[flag], reason, actor });
  }
  return changes;
}

export async function recordFlagChanges(trx: Knex.Transaction, changes: FlagChange[], at: Date): Promise<void> {
  if (changes.length === 0) return;
  await trx('allowance_flag_events').insert(
    changes.map((c) => ({ organization_id: c.organizationId, flag: c.flag, value: c.value, reason: c.reason, actor: c.actor, at })),
  );
}

/**
 * The cheapest positive credits-priced product of each organization, resolved from its plan
 * and its overrides (a disabled override removes a product; otherwise it adds one or replaces
 * its measure, null fields keeping the plan's). One query for a whole batch of organizations.
 */
export async function cheapestCreditCalls(q: Knex | Knex.Transaction, organizationIds: string[]): Promise<Map<string, number | null>> {
  return cheapestOfEach(await creditPrices(q, organizationIds));
}

/** The cheapest of each organization's prices (creditPrices), null where none is in credits. */
export const cheapestOfEach = (prices: ReadonlyMap<string, readonly number[]>): Map<string, number | null> =>
  new Map([...prices].map(([id, list]) => [id, list[0] ?? null]));

/**
 * Each organization's distinct positive credits prices, cheapest first ([]: none is priced in
 * credits). Its products are resolved by effectiveProducts, as the access control resolves them
 * for each call: an override that adds a product the plan lacks and leaves its measure to the
 * catalogue's default is priced at that default here too (a second resolution in SQL missed it,
 * so the flags and the balance re-reads could ignore a product the API was charging for).
 */
export async function creditPrices(q: Knex | Knex.Transaction, organizationIds: string[]): Promise<Map<string, number[]>> {
  const result = new Map<string, number[]>(organizationIds.map((id) => [id, []]));
  if (organizationIds.length === 0) return result;
  const { rows } = await q.raw<{ rows: { id: string; plan_products: PlanProduct[]; overrides: ProductOverride[] }[] }>(
    `SELECT o.id, ${PLAN_PRODUCTS_JSON} AS plan_products, ${OVERRIDES_JSON} AS overrides
       FROM organizations o WHERE o.id = ANY(?::text[])`,
    [organizationIds],
  );
  for (const row of rows) {
    const prices = new Set<number>();
    for (const { measure } of effectiveProducts(row.plan_products, row.overrides).values()) {
      if (measure.unit === 'credits' && measure.quantity > 0) prices.add(Number(measure.quantity));
    }
    result.set(row.id, [...prices].sort((a, b) => a - b));
  }
  return result;
}

/**
 * Whether a balance moving from `before` to `after` fell below one of the prices: a call at
 * that price can no longer be paid, and the API processes, which check each call's price
 * against the balance they last read, must read it again now (not at their cache's TTL).
 */
export const crossesPrice = (prices: readonly number[], before: number, after: number): boolean => prices.some((p) => before >= p && after < p);
