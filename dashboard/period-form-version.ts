import { callsCapTerms, type CallsCapTerms } from '../core/billing/index.js';
import { auditSince } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';
import type { DashboardState } from './state.js';
import { auditActor, describeAuditAction } from './views/audit-entries.js';
import { html, type Html } from './views/html.js';

// The operator's period form (credits per period, calls cap) and its "Use the plan's cap" button
// are saved only over the values the page showed. The page carries them in hidden fields; the
// save compares them with the organization's row, locked, and on any difference changes nothing
// and shows the form again with what the values are now and who changed them. Without this a
// cap set from the CLI (or by another operator) while the page was open was silently put back:
// the save compared the form with the database, not with what the operator had seen.

/** What the period form shows, as the save compares it. */
export interface PeriodFormValues {
  creditsPerPeriod: number | null;
  cap: CallsCapTerms;
}

const SHOWN_CREDITS = 'shownCreditsPerPeriod';
const SHOWN_CAP = 'shownCallsCap';
/** The newest activity row of the organization when the page was drawn: rows after it changed something since. */
const SHOWN_AUDIT = 'shownAudit';
/** The hidden fields, which a form shown again after a refusal keeps as they came. */
export const SHOWN_FIELDS: readonly string[] = [SHOWN_CREDITS, SHOWN_CAP, SHOWN_AUDIT];

// The activity rows that can change what the form shows.
const CHANGING_ACTIONS = ['organization.period_set', 'allowance.cap_set', 'allowance.cap_plan', 'organization.plan_set'];

const creditsVersion = (v: PeriodFormValues) => (v.creditsPerPeriod === null ? '' : String(v.creditsPerPeriod));
// The cap of later months, where it comes from, this month's (a cap saved here is this month's
// too), and the plan with its cap, which "Use the plan's cap" names on its button.
const capVersion = ({ cap }: PeriodFormValues) =>
  [cap.laterPeriods ?? 'none', cap.own ? 'own' : 'plan', cap.thisPeriod ?? 'none', cap.planId ?? '-', cap.planCallsCap ?? 'none'].join(' ');

/** The hidden fields of a form drawn with `values`, the newest activity row then being `auditId`; a refused form's own fields when it had them. */
export function shownFields(values: PeriodFormValues, auditId: number, typed: Partial<Record<string, string>>): Html {
  const credits = typed[SHOWN_CREDITS] ?? creditsVersion(values);
  const cap = typed[SHOWN_CAP] ?? capVersion(values);
  const audit = typed[SHOWN_AUDIT] ?? String(auditId);
  return html`<input type="hidden" name="${SHOWN_CREDITS}" value="${credits}"><input type="hidden" name="${SHOWN_CAP}" value="${cap}"><input type="hidden" name="${SHOWN_AUDIT}" value="${audit}">`;
}

/** A save refused because the values changed after the page showed them; nothing was written. */
export class PeriodFormChanged extends Error {
  constructor(
    readonly now: PeriodFormValues,
    readonly creditsChanged: boolean,
    readonly capChanged: boolean,
  ) {
    super('the period form was drawn with values that have changed since');
  }
}

/**
 * Throws PeriodFormChanged when the save would change something (`saveChanges`, asked of the
 * values now) and the organization's values are not those the form showed. Call in the save's
 * transaction with the organization's row locked (lockedSettings), so that nothing changes them
 * between this check and the save's writes. A save that would change nothing is let through
 * whatever the page showed: the second of a double-click finds the first's values, which are
 * its own, and is answered "Saved.", not told that someone changed them. A form without the
 * hidden fields (a page drawn before they existed, or a script) showed nothing this can vouch
 * for: refused as changed.
 */
export async function refuseIfChanged(
  trx: Db,
  organizationId: string,
  creditsPerPeriod: number | null,
  form: Partial<Record<string, string>>,
  saveChanges: (now: PeriodFormValues) => boolean,
): Promise<PeriodFormValues> {
  const now: PeriodFormValues = { creditsPerPeriod, cap: await callsCapTerms(trx, organizationId) };
  const creditsChanged = form[SHOWN_CREDITS] !== creditsVersion(now);
  const capChanged = form[SHOWN_CAP] !== capVersion(now);
  if ((creditsChanged || capChanged) && saveChanges(now)) throw new PeriodFormChanged(now, creditsChanged, capChanged);
  return now;
}

/** What the operator is told: nothing saved, the values now, who changed them since the page was drawn (when the activity log says). */
export async function changedNotice(state: DashboardState, db: Db, organizationId: string, err: PeriodFormChanged, form: Partial<Record<string, string>>): Promise<string> {
  const { t, f } = state;
  const { cap, creditsPerPeriod } = err.now;
  const capText = (value: number | null) => (value === null ? t('common.noCap') : f.number(value));
  const parts = [t('operator.org.changed')];
  if (err.capChanged) {
    const source = cap.own ? t('operator.org.changedCapOwn') : cap.planId ? t('operator.org.changedCapPlan', { plan: cap.planId }) : t('operator.noPlan');
    parts.push(t('operator.org.changedCap', { cap: capText(cap.laterPeriods), source }));
    if (cap.period !== null && cap.thisPeriod !== cap.laterPeriods) parts.push(t('operator.org.callsCapThisPeriod', { cap: capText(cap.thisPeriod) }));
  }
  if (err.creditsChanged) parts.push(creditsPerPeriod === null ? t('operator.org.changedCreditsPlan') : t('operator.org.changedCredits', { credits: f.number(creditsPerPeriod) }));
  // Who: the newest row since the page was drawn that changes these values. None when the
  // change was not a person's (a monthly rollover, a plan's own cap edited) or the form did
  // not say when it was drawn.
  const since = Number(form[SHOWN_AUDIT]);
  const [last] = Number.isSafeInteger(since) && since >= 0 ? await auditSince(db, organizationId, since, CHANGING_ACTIONS, 1) : [];
  if (last) {
    const what = describeAuditAction(state, last);
    parts.push(t('operator.org.changedBy', { who: auditActor(state, last), when: f.dateTime(last.at), what: typeof what === 'string' ? what : last.action }));
  }
  parts.push(t('operator.org.changedAgain'));
  return parts.join(' ');
}
