import type { Measure, ProductKind } from '../core/access/index.js';
import { effectiveProducts, type CallsCapTerms, type LimitOverrides, type PlanProduct, type ProductOverride } from '../core/billing/index.js';
import type { Db } from '../core/db/index.js';
import type { RateLimits } from '../core/ratelimit/index.js';
import type { FormVersion } from './form-version.js';
import { measure } from './views/units.js';

// What each of the operator's organization forms shows, as its save compares it with the values
// now (form-version.ts): the parts in the hidden fields, what each is when it has changed, and
// the activity rows that change them.

/** The period form (credits per period, calls cap) and its "Use the plan's cap" button. */
export interface PeriodFormValues {
  creditsPerPeriod: number | null;
  cap: CallsCapTerms;
}

export const periodForm: FormVersion<PeriodFormValues> = {
  parts: [
    {
      // The cap of later months, where it comes from, this month's (a cap saved here is this
      // month's too), and the plan with its cap, which "Use the plan's cap" names on its button.
      field: 'shownCallsCap',
      version: ({ cap }) => [cap.laterPeriods ?? 'none', cap.own ? 'own' : 'plan', cap.thisPeriod ?? 'none', cap.planId ?? '-', cap.planCallsCap ?? 'none'].join(' '),
      describe: ({ t, f }, { cap }) => {
        const capText = (value: number | null) => (value === null ? t('common.noCap') : f.number(value));
        const source = cap.own ? t('operator.org.changedCapOwn') : cap.planId ? t('operator.org.changedCapPlan', { plan: cap.planId }) : t('operator.noPlan');
        const now = [t('operator.org.changedCap', { cap: capText(cap.laterPeriods), source })];
        if (cap.period !== null && cap.thisPeriod !== cap.laterPeriods) now.push(t('operator.org.callsCapThisPeriod', { cap: capText(cap.thisPeriod) }));
        return now;
      },
    },
    {
      field: 'shownCreditsPerPeriod',
      version: ({ creditsPerPeriod }) => (creditsPerPeriod === null ? '' : String(creditsPerPeriod)),
      describe: ({ t, f }, { creditsPerPeriod }) => [
        creditsPerPeriod === null ? t('operator.org.changedCreditsPlan') : t('operator.org.changedCredits', { credits: f.number(creditsPerPeriod) }),
      ],
    },
  ],
  changes: ['organization.period_set', 'allowance.cap_set', 'allowance.cap_plan', 'organization.plan_set'],
};

/** The plan form: the plan the organization is on (null: none). */
export interface PlanFormValues {
  planId: string | null;
}

export const planForm: FormVersion<PlanFormValues> = {
  parts: [
    {
      field: 'shownPlan',
      version: ({ planId }) => planId ?? '',
      describe: ({ t }, { planId }) => [planId === null ? t('operator.org.changedNoPlan') : t('operator.org.changedPlan', { plan: planId })],
    },
  ],
  changes: ['organization.plan_set'],
};

/** The rate limits form: the organization's overrides (null: the plan's), and the plan's limits, which its help shows. */
export interface LimitsFormValues {
  overrides: LimitOverrides;
  plan: RateLimits | null;
}

const LIMITS = ['perSecond', 'burst', 'perMinute'] as const;

export const limitsForm: FormVersion<LimitsFormValues> = {
  parts: [
    {
      field: 'shownLimits',
      version: ({ overrides, plan }) => [...LIMITS.map((l) => overrides[l] ?? '-'), '/', ...(plan ? LIMITS.map((l) => plan[l]) : ['none'])].join(' '),
      describe: ({ t, f }, { overrides, plan }) => {
        const value = (l: (typeof LIMITS)[number]) => {
          const own = overrides[l];
          if (own !== null) return f.number(own);
          return plan ? t('operator.org.changedLimitPlan', { value: f.number(plan[l]) }) : t('operator.org.changedLimitNone');
        };
        return [t('operator.org.changedLimits', { perSecond: value('perSecond'), burst: value('burst'), perMinute: value('perMinute') })];
      },
    },
  ],
  // A plan change moves the limits an empty field stands for.
  changes: ['organization.limits_set', 'organization.plan_set'],
};

/** One product's form: the organization's override of it, and the plan's measure, which the row shows without one. */
export interface ProductFormValues {
  product: string;
  planId: string | null;
  /** Null: the product is not in the plan, or there is no plan. */
  plan: PlanProduct | null;
  override: ProductOverride | null;
}

/**
 * A product's form, one per product on the page, each saved only over its own row: a change of
 * another product meanwhile refuses nothing.
 */
export function productForm(product: string): FormVersion<ProductFormValues> {
  return {
    parts: [
      {
        field: 'shownProduct',
        version: ({ plan, override }) => JSON.stringify({
          override: override && [override.enabled, override.quantity, override.unit],
          plan: plan && [plan.quantity, plan.unit],
        }),
        describe: (state, { planId, plan, override }) => {
          const { t } = state;
          // As the access control resolves it (effectiveProducts), and as the row shows it.
          const now = effectiveProducts(plan ? [plan] : [], override ? [override] : []).get(product);
          if (now) {
            const source = override ? t('operator.org.changedProductOverride') : t('operator.org.changedProductPlan', { plan: planId ?? '' });
            return [t('operator.org.changedProduct', { product, measure: measure(state, now.measure.quantity, now.measure.unit), source })];
          }
          if (override) return [t('operator.org.changedProductOff', { product })];
          return [planId === null ? t('operator.org.changedProductNoPlan', { product }) : t('operator.org.changedProductNotInPlan', { product, plan: planId })];
        },
      },
    ],
    changes: [{ action: 'organization.product_set', details: { product } }, { action: 'organization.product_reset', details: { product } }, 'organization.plan_set'],
    // Every product's form has the same fields: a refused one is the row of the product it names.
    owns: (typed) => typed.product === product && typed.shownProduct !== undefined,
  };
}

/** A product's form values as the save compares them, read in its transaction (the organization's row locked). */
export async function productFormValues(trx: Db, organizationId: string, planId: string | null, product: string): Promise<ProductFormValues> {
  type Row = { product_kind: ProductKind; quantity: number | null; unit: Measure['unit'] | null };
  const plan = planId ? await trx('plan_entitlements').where({ plan_id: planId, product }).first<(Row & { quantity: number; unit: Measure['unit'] }) | undefined>('product_kind', 'quantity', 'unit') : undefined;
  const override = await trx('organization_overrides').where({ organization_id: organizationId, product }).first<(Row & { enabled: boolean }) | undefined>('product_kind', 'enabled', 'quantity', 'unit');
  return {
    product,
    planId,
    plan: plan ? { product, kind: plan.product_kind, quantity: plan.quantity, unit: plan.unit } : null,
    override: override ? { product, kind: override.product_kind, enabled: override.enabled, quantity: override.quantity, unit: override.unit } : null,
  };
}
