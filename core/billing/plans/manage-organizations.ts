import { z } from 'zod';
import { singleLine, type Db } from '../../db/index.js';
import { AppError, parseInput } from '../../errors/index.js';
import { newId } from '../../ids/index.js';
import type { RateLimits } from '../../ratelimit/index.js';
import { usageQuantity } from '../../usage/usage-event.js';
import { changeCredits, reevaluateFlags, setCallsCap } from '../adjust-allowance.js';
import { periodOf } from '../billing-period.js';
import { findProduct } from '../products.js';
import { effectiveProducts, type EffectiveProduct, type ProductOverride } from './effective-products.js';
import { planLimits, rateLimitValue, refuseContradictoryLimits, type PlanRow } from './plan-store.js';
import { systemReason } from '../system-reasons.js';
import { lockOrganizationName, organizationNamed, refuseTakenName } from './organization-names.js';

// Provisioning used by the operator CLI and the dashboard's operator pages. Every UPDATE here fires
// an `organization_changed` notification (migration 002), so running processes see the change
// in well under a second.

export interface OrganizationSummary {
  id: string;
  name: string;
  planId: string | null;
  status: string;
  createdAt: Date;
}

export interface LimitOverrides {
  perSecond: number | null;
  burst: number | null;
  perMinute: number | null;
}

export interface AllowanceState {
  period: string;
  creditsBalance: number;
  callsUsed: number;
  callsCap: number | null;
  creditsExhausted: boolean;
  limitReached: boolean;
}

export interface OrganizationDetails extends OrganizationSummary {
  limitOverrides: LimitOverrides;
  /** Plan limits with the overrides applied; null without a plan. */
  effectiveLimits: RateLimits | null;
  productOverrides: ProductOverride[];
  products: Map<string, EffectiveProduct>;
  allowance: AllowanceState | null;
}

interface OrganizationRow {
  id: string;
  name: string;
  plan_id: string | null;
  status: string;
  rate_per_second: number | null;
  burst: number | null;
  rate_per_minute: number | null;
  /** With calls_cap_own, the organization's own calls cap over its plan's (null: no cap). */
  calls_cap_per_period: number | null;
  calls_cap_own: boolean;
  created_at: Date;
}

const toSummary = (row: OrganizationRow): OrganizationSummary => ({
  id: row.id,
  name: row.name,
  planId: row.plan_id,
  status: row.status,
  createdAt: row.created_at,
});

export const createOrganizationInputSchema = z.object({
  name: singleLine(z.string().trim().min(1, 'must not be empty').max(200, 'at most 200 characters')),
  planId: z.string().min(1).nullable().default(null),
  /** Recorded on the opening credit grant in the ledger. */
  actor: z.string().min(1).default('system'),
  /** false: refused when another organization has this name (organization-names.ts), as the
   * operator's CLI and form ask unless told to make another; core's own callers make it anyway. */
  allowDuplicateName: z.boolean().default(true),
});
export type CreateOrganizationInput = z.input<typeof createOrganizationInputSchema>;

/**
 * Creates the organization and its allowance for the current UTC month, granted the plan's
 * credits and call cap (and the grant written to the ledger, so balances always reconcile).
 */
export async function createOrganization(db: Db, input: CreateOrganizationInput): Promise<OrganizationSummary> {
  const parsed = parseInput(createOrganizationInputSchema, input);
  return db.transaction(async (trx) => {
    const plan = parsed.planId ? await requirePlan(trx, parsed.planId) : undefined;
    // Taken by every creation, a duplicate allowed or not: one made meanwhile by another caller
    // is then committed before the check below reads the names.
    await lockOrganizationName(trx, parsed.name);
    if (!parsed.allowDuplicateName) {
      const existing = await organizationNamed(trx, parsed.name);
      if (existing) refuseTakenName(existing);
    }
    const [row] = (await trx('organizations')
      .insert({ id: newId('org'), name: parsed.name, plan_id: plan?.id ?? null })
      .returning('*')) as OrganizationRow[];
    await openAllowance(trx, row!.id, plan, parsed.actor);
    return toSummary(row!);
  });
}

export async function listOrganizations(db: Db): Promise<OrganizationSummary[]> {
  const rows = (await db('organizations').orderBy([{ column: 'created_at' }, { column: 'id' }]).select('*')) as OrganizationRow[];
  return rows.map(toSummary);
}

/** An id, or a name that matches exactly one organization (operators type names). */
export async function findOrganizationId(db: Db, idOrName: string): Promise<string> {
  const byId = await db('organizations').where({ id: idOrName }).first('id');
  if (byId) return byId.id as string;
  const byName = (await db('organizations').where({ name: idOrName }).orderBy('created_at').orderBy('id').select('id')) as { id: string }[];
  if (byName.length === 1) return byName[0]!.id;
  // Their ids, oldest first, so that the operator can pick one without another command.
  if (byName.length > 1) throw new AppError('invalid_params', `More than one organization is named "${idOrName}" (${byName.map((o) => o.id).join(', ')}): use its id.`);
  // The name typed in another case or spacing ("demo organization"): named, not taken for it, as
  // the name must be exact for a command that grants credits or revokes keys.
  const near = await organizationNamed(db, idOrName);
  if (near) throw new AppError('not_found', `No organization with id or name "${idOrName}"; did you mean "${near.name}" (${near.id})?`);
  throw new AppError('not_found', `No organization with id or name "${idOrName}".`);
}

export async function getOrganization(db: Db, organizationId: string): Promise<OrganizationDetails> {
  const row = (await db('organizations').where({ id: organizationId }).first('*')) as OrganizationRow | undefined;
  if (!row) throw new AppError('not_found', `No organization with id ${organizationId}.`);
  const plan = row.plan_id ? ((await db('plans').where({ id: row.plan_id }).first('*')) as PlanRow | undefined) : undefined;
  const planProducts = row.plan_id ? await db('plan_entitlements').where({ plan_id: row.plan_id }).select('*') : [];
  const overrides = (await db('organization_overrides').where({ organization_id: organizationId }).orderBy('product').select('*')).map(
    (o): ProductOverride => ({ product: o.product, kind: o.product_kind, enabled: o.enabled, quantity: o.quantity, unit: o.unit }),
  );
  const allowance = await db('allowances').where({ organization_id: organizationId }).first('*');
  const limitOverrides: LimitOverrides = { perSecond: row.rate_per_second, burst: row.burst, perMinute: row.rate_per_minute };
  return {
    ...toSummary(row),
    limitOverrides,
    effectiveLimits: plan ? applyLimitOverrides(planLimits(plan), limitOverrides) : null,
    productOverrides: overrides,
    products: effectiveProducts(
      planProducts.map((p) => ({ product: p.product, kind: p.product_kind, quantity: p.quantity, unit: p.unit })),
      overrides,
    ),
    allowance: allowance
      ? {
          period: allowance.period,
          creditsBalance: allowance.credits_balance,
          callsUsed: allowance.calls_used,
          callsCap: allowance.calls_cap,
          creditsExhausted: allowance.credits_exhausted,
          limitReached: allowance.limit_reached,
        }
      : null,
  };
}

export function applyLimitOverrides(plan: RateLimits, overrides: LimitOverrides): RateLimits {
  return {
    perSecond: overrides.perSecond ?? plan.perSecond,
    burst: overrides.burst ?? plan.burst,
    perMinute: overrides.perMinute ?? plan.perMinute,
  };
}

/**
 * Moves the organization to another plan (null: unprovision). An organization getting its
 * first plan is granted that plan's credits and cap for the current period, as at creation;
 * a change between plans takes the new plan's call cap now, unless the organization has a cap
 * of its own (an override outlives plan changes, as the rollover reads it), and leaves the
 * balance to the billing worker's next rollover; the flags are judged again by the new plan's
 * prices. A cap that changes is a ledger row, as every cap change is; saving the plan the
 * organization already has changes nothing.
 */
export async function setOrganizationPlan(db: Db, organizationId: string, planId: string | null, actor = 'system'): Promise<OrganizationSummary> {
  return db.transaction(async (trx) => {
    const current = (await trx('organizations').where({ id: organizationId }).forUpdate().first('*')) as OrganizationRow | undefined;
    if (!current) throw new AppError('not_found', `No organization with id ${organizationId}.`);
    const plan = planId ? await requirePlan(trx, planId) : undefined;
    const allowance = await trx('allowances').where({ organization_id: organizationId }).forUpdate().first('period');
    // Provisioned again: granted while the organization has no plan yet, so that a month the
    // allowance rolls into on the way is opened on the old terms (no credits) and this month's
    // included credits come from grantPlan alone.
    if (allowance && plan && current.plan_id === null) await grantPlan(trx, organizationId, plan, actor);
    const [row] = (await trx('organizations')
      .where({ id: organizationId })
      .update({ plan_id: plan?.id ?? null, updated_at: trx.fn.now() })
      .returning('*')) as OrganizationRow[];
    if (!allowance) await openAllowance(trx, organizationId, plan, actor);
    else if (plan && current.plan_id !== null && current.plan_id !== plan.id) {
      const cap = current.calls_cap_own ? current.calls_cap_per_period : plan.calls_cap_per_period;
      await capThisPeriod(trx, organizationId, cap, actor, systemReason.planChanged(current.plan_id, plan.id));
    }
    // The new plan's prices judge credits_exhausted: a balance of 5 that could not pay a
    // 10-credit call may pay a 1-credit one (and the other way round). With the cap unchanged
    // nothing above looked at the flags (a plan given again was granted before it was set), and
    // no call clears a flag its refusals keep up.
    if (allowance && plan && current.plan_id !== plan.id) {
      await reevaluateFlags(trx, { organizationId, reason: systemReason.planChanged(current.plan_id ?? 'none', plan.id) });
    }
    return toSummary(row!);
  });
}

const limitOverridesSchema = z.object({
  perSecond: rateLimitValue.nullable().optional(),
  burst: rateLimitValue.nullable().optional(),
  perMinute: rateLimitValue.nullable().optional(),
});
export type LimitOverridesInput = z.infer<typeof limitOverridesSchema>;

/** The limits in force once overrides apply (null: neither an override nor a plan sets one). */
const limitsInForceSchema = z
  .object({ perSecond: z.number().nullable(), burst: z.number().nullable(), perMinute: z.number().nullable() })
  .superRefine(refuseContradictoryLimits);

/** Only the given fields change; null returns a field to the plan's value. */
export async function setOrganizationLimits(db: Db, organizationId: string, limits: LimitOverridesInput): Promise<LimitOverrides> {
  const parsed = parseInput(limitOverridesSchema, limits);
  return db.transaction(async (trx) => {
    // Locked: two changes at once must not each pass against the other's old value.
    const current = (await trx('organizations').where({ id: organizationId }).forUpdate().first('*')) as OrganizationRow | undefined;
    if (!current) throw new AppError('not_found', `No organization with id ${organizationId}.`);
    const next: LimitOverrides = {
      perSecond: parsed.perSecond === undefined ? current.rate_per_second : parsed.perSecond,
      burst: parsed.burst === undefined ? current.burst : parsed.burst,
      perMinute: parsed.perMinute === undefined ? current.rate_per_minute : parsed.perMinute,
    };
    const plan = current.plan_id ? ((await trx('plans').where({ id: current.plan_id }).first('*')) as PlanRow | undefined) : undefined;
    parseInput(limitsInForceSchema, {
      perSecond: next.perSecond ?? plan?.rate_per_second ?? null,
      burst: next.burst ?? plan?.burst ?? null,
      perMinute: next.perMinute ?? plan?.rate_per_minute ?? null,
    });
    const [row] = (await trx('organizations')
      .where({ id: organizationId })
      .update({ rate_per_second: next.perSecond, burst: next.burst, rate_per_minute: next.perMinute, updated_at: trx.fn.now() })
      .returning('*')) as OrganizationRow[];
    return { perSecond: row!.rate_per_second, burst: row!.burst, perMinute: row!.rate_per_minute };
  });
}

const productOverrideSchema = z
  .object({
    enabled: z.boolean().default(true),
    quantity: usageQuantity.nullable().default(null),
    unit: z.enum(['credits', 'calls']).nullable().default(null),
  });
export type ProductOverrideInput = z.input<typeof productOverrideSchema>;

/**
 * Adds, re-prices or (enabled: false) removes one catalogued product for this organization. The
 * cheapest credits-priced product may change with it, and credits_exhausted depends on that
 * price: the flags are re-evaluated in the same transaction (a balance that can pay for some
 * call again must not stay refused until the next usage or grant).
 */
export async function setProductOverride(db: Db, organizationId: string, product: string, override: ProductOverrideInput): Promise<ProductOverride> {
  const parsed = parseInput(productOverrideSchema, override);
  const catalogued = findProduct(product);
  if (!catalogued) throw new AppError('invalid_params', `Unknown product "${product}".`, { details: [{ path: 'product', message: 'not in the product catalogue' }] });
  const row = {
    organization_id: organizationId,
    product,
    product_kind: catalogued.kind,
    enabled: parsed.enabled,
    quantity: parsed.enabled ? parsed.quantity : null,
    unit: parsed.enabled ? parsed.unit : null,
  };
  await db.transaction(async (trx) => {
    await lockOrganization(trx, organizationId);
    await trx('organization_overrides').insert(row).onConflict(['organization_id', 'product']).merge();
    await reevaluateFlags(trx, { organizationId, reason: systemReason.productChanged(product) });
  });
  return { product, kind: catalogued.kind, enabled: row.enabled, quantity: row.quantity, unit: row.unit };
}

/** Back to what the plan says (the flags re-evaluated, as in setProductOverride). */
export async function clearProductOverride(db: Db, organizationId: string, product: string): Promise<boolean> {
  return db.transaction(async (trx) => {
    await lockOrganization(trx, organizationId);
    const deleted = await trx('organization_overrides').where({ organization_id: organizationId, product }).delete();
    if (deleted > 0) await reevaluateFlags(trx, { organizationId, reason: systemReason.productReset(product) });
    return deleted > 0;
  });
}

/** This month's calls cap becomes `cap` if it is not already; a cap that moves is a ledger row
 * with who and why, as every cap change is (the organization's own cap is left as it is). */
async function capThisPeriod(db: Db, organizationId: string, cap: number | null, actor: string, reason: string): Promise<void> {
  const { calls_cap: current } = await db('allowances').where({ organization_id: organizationId }).first<{ calls_cap: number | null }>('calls_cap');
  if (cap !== current) await setCallsCap(db, { organizationId, callsCap: cap, thisPeriodOnly: true, actor, reason });
}

// A product's override is changed with the organization's row locked, as its plan, limits and
// caps are: the operator's product form compares the override with what its page showed while
// holding that lock, so a change from the CLI either comes before the comparison or waits for the
// save, never between the two (where the save would put back what the page showed).
async function lockOrganization(trx: Db, organizationId: string): Promise<void> {
  const row = await trx('organizations').where({ id: organizationId }).forUpdate().first('id');
  if (!row) throw new AppError('not_found', `No organization with id ${organizationId}.`);
}

async function requirePlan(db: Db, planId: string): Promise<PlanRow> {
  const plan = (await db('plans').where({ id: planId }).first('*')) as PlanRow | undefined;
  if (!plan) throw new AppError('not_found', `No plan with id ${planId}.`);
  return plan;
}

async function openAllowance(db: Db, organizationId: string, plan: PlanRow | undefined, actor: string): Promise<void> {
  await db('allowances').insert({ organization_id: organizationId, period: periodOf(new Date()), credits_balance: 0, calls_cap: plan?.calls_cap_per_period ?? null });
  if (plan) await grantPlan(db, organizationId, plan, actor);
}

// The opening grant goes through the billing pipeline's own changeCredits (one ledger row,
// flags re-evaluated), so provisioning and later top-ups follow one rule. Inside our
// transaction it runs as a savepoint.
//
// Included credits come once a month: an organization unprovisioned and provisioned again
// within a month (`org set-plan ORG none`, then a plan) gets no second month's worth. The
// grant's event id names the organization and month, like the rollover's, so the ledger itself
// says whether this month has had them. Grants written before the ids named the month (up to
// November 2026) had random ids and are recognised by the reason they were written with, which
// is unchanged.
async function grantPlan(db: Db, organizationId: string, plan: PlanRow, actor: string): Promise<void> {
  const period = periodOf(new Date());
  const eventId = `grt_included_${organizationId}_${period}`;
  if (plan.credits_per_period > 0) {
    const granted = await db('usage_ledger')
      .where((month) => {
        void month
          .whereIn('event_id', [eventId, `rollover_${organizationId}_${period}`])
          .orWhere((legacy) => void legacy.where({ organization_id: organizationId, entry_type: 'grant', period }).andWhereLike('reason', systemReason.includedCredits('%', period)));
      })
      .andWhere('credits_delta', '>', 0)
      .first('id');
    if (!granted) await changeCredits(db, { organizationId, kind: 'grant', credits: plan.credits_per_period, actor, reason: systemReason.includedCredits(plan.id, period), eventId });
  }
  const own = await db('organizations').where({ id: organizationId }).first<{ calls_cap_per_period: number | null; calls_cap_own: boolean } | undefined>('calls_cap_per_period', 'calls_cap_own');
  const cap = own?.calls_cap_own ? own.calls_cap_per_period : plan.calls_cap_per_period;
  await capThisPeriod(db, organizationId, cap, actor, systemReason.planCap(plan.id));
}
