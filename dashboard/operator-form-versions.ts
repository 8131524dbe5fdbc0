import type { CallsCapTerms, LimitOverrides } from '../core/billing/index.js';
import type { RateLimits } from '../core/ratelimit/index.js';
import type { FormVersion } from './form-version.js';

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
