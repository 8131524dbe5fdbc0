import { thresholdKinds, type ThresholdKind } from '../../core/alerts/index.js';
import type { AuditRow } from '../../core/dashboard-auth/index.js';
import { rotationGraceSeconds } from '../../core/key-rotation/index.js';
import { en } from '../i18n/messages-en.js';
import type { MessageKey } from '../i18n/translate.js';
import type { DashboardState } from '../state.js';
import { html, type HtmlValue } from './html.js';
import { unitWord } from './units.js';

// Audit rows as people read them, in the dashboard's language: what was done, with the values
// it was done with. Each action the dashboard's handlers and the operator CLI record (withAudit)
// has its sentence in the message catalogues as `audit.<action>`; a row with an action that has
// none (written by a newer version, say) shows its code.
function sentenceKey(action: string): MessageKey | undefined {
  const key = `audit.${action}`;
  return key in en ? (key as MessageKey) : undefined;
}

// The detail whose number picks the singular or plural sentence ('Granted 1 credit').
const countedBy: Partial<Record<string, string>> = {
  'credits.grant': 'credits',
  'credits.top_up': 'credits',
  'usage.totals_rebuilt': 'bucketsOff',
};

// Details whose null is a choice, not a gap: no calls cap at all, or a rate limit back to the plan's.
const meaningOfNull: Partial<Record<string, MessageKey>> = {
  callsCap: 'audit.value.noCap',
  creditsPerPeriod: 'audit.value.plan',
  perSecond: 'audit.value.plan',
  burst: 'audit.value.plan',
  perMinute: 'audit.value.plan',
};

// A cap change has its own sentences for "no cap" and "this period only" (the CLI's
// --this-period-only), which the value alone would leave out; the period form's row, a sentence
// for what it changed; an invitation accepted by someone
// who keeps a higher role, and a product override, sentences that say what happened.
function sentenceOf(action: string, details: Record<string, unknown>): string {
  if (action === 'member.joined' && details.invitedAs !== undefined) return 'member.joined_kept_role';
  if (action === 'organization.plan_set' && details.planId === null) return 'organization.plan_removed';
  // A removal logged before removals named the address names the person by id (said as their
  // e-mail now, when the account still exists).
  if (action === 'member.removed' && details.email === undefined) return 'member.removed_by_id';
  // A product override: turned off, or the measure it is billed at now when the row names it
  // whole (one part left to the plan, or a row from before details were kept, says only that
  // it changed).
  if (action === 'organization.product_set') {
    if (details.enabled === false) return 'organization.product_disabled';
    return typeof details.quantity === 'number' && typeof details.unit === 'string' ? 'organization.product_measure' : action;
  }
  // The period form records the fields it changed (older rows name both, changed or not).
  if (action === 'organization.period_set') {
    if (!('callsCap' in details)) return 'organization.period_set_credits';
    if (!('creditsPerPeriod' in details)) return 'organization.period_set_cap';
    return action;
  }
  // A credit change made under a reference (an invoice number: the CLI's --reference, the
  // operator form's Reference) says it, as the ledger page does.
  if (action.startsWith('credits.') && typeof details.reference === 'string') return `${action}_reference`;
  // A rotation's grace period as the rotate form offered it ("1 hour", revoked at once for none),
  // not in seconds; a period the form does not offer (a row written otherwise) in seconds still.
  if (action === 'key.rotated') return details.graceSeconds === 0 ? 'key.rotated_at_once' : isOfferedGrace(details.graceSeconds) ? action : 'key.rotated_seconds';
  // Back on the plan's cap: the CLI gives a reason, the operator's form none.
  if (action === 'allowance.cap_plan') return 'reason' in details ? action : 'allowance.cap_plan_form';
  if (action !== 'allowance.cap_set') return action;
  return `allowance.${details.callsCap === null ? 'cap_removed' : 'cap_set'}${details.thisPeriodOnly === true ? '_this_period' : ''}`;
}

const isOfferedGrace = (value: unknown): value is (typeof rotationGraceSeconds)[number] => (rotationGraceSeconds as readonly unknown[]).includes(value);

// Details that name a member's role, said as the pages say roles. A role change's `from` is a
// role (its `to` is said with its preposition, below); key rotations use the names for key ids.
const roleDetail = (action: string, name: string) =>
  name === 'role' || name === 'invitedAs' || (action === 'member.role_changed' && name === 'from');

// The role a change gave, with the word that leads to it: each role has its own, as Italian
// elides "a" before a vowel ("da amministratore ad amministrazione e finanza").
const roleTo = (state: DashboardState, role: string) =>
  role === 'admin' || role === 'finance' ? state.t(`audit.roleTo.${role}`) : state.t('audit.roleTo.other', { role });

export function describeAuditAction(state: DashboardState, row: Pick<AuditRow, 'action' | 'details'> & Partial<Pick<AuditRow, 'keyLabels' | 'memberEmails'>>): HtmlValue {
  const details = row.details ?? {};
  const key = sentenceKey(sentenceOf(row.action, details));
  if (!key) return html`<code>${row.action}</code>`;
  const counted = countedBy[row.action] ? details[countedBy[row.action]!] : undefined;
  const params: Record<string, string | number> = typeof counted === 'number' ? { count: counted } : {};
  for (const [name, value] of Object.entries(details)) {
    if (value === null && meaningOfNull[name]) params[name] = state.t(meaningOfNull[name]);
    else if (value === null || value === undefined || value === '') params[name] = '—';
    // A key as the keys page shows it (name and prefix), not by the id it never shows.
    else if (typeof value === 'string' && row.keyLabels?.[value]) params[name] = row.keyLabels[value];
    else if (name === 'userId' && typeof value === 'string' && row.memberEmails?.[value]) params[name] = row.memberEmails[value];
    else if (row.action === 'key.rotated' && name === 'graceSeconds' && isOfferedGrace(value)) params.grace = state.t(`keys.grace.${value}` as MessageKey);
    else if (typeof value === 'number') params[name] = state.f.number(value);
    else if (row.action === 'member.role_changed' && name === 'to' && typeof value === 'string') params[name] = roleTo(state, value);
    else if (roleDetail(row.action, name) && (value === 'admin' || value === 'finance')) params[name] = state.t(`role.${value}`);
    // Codes, said as the pages say them: 'crediti' after its quantity, a threshold by its label.
    else if (name === 'unit' && typeof value === 'string') params[name] = unitWord(state, value, typeof details.quantity === 'number' ? details.quantity : 0);
    // A threshold as a sentence with its value ("Allowance used reaches 80%").
    else if (name === 'kind' && (thresholdKinds as readonly unknown[]).includes(value)) {
      params.threshold = typeof details.value === 'number'
        ? state.t(`alerts.threshold.${value as ThresholdKind}`, { value: state.f.number(details.value) })
        : state.t(`alerts.condition.${value as ThresholdKind}`);
    }
    else params[name] = typeof value === 'string' ? value : JSON.stringify(value);
  }
  // A value the row lacks reads as "—", not as a {placeholder}.
  return state.t(key, params).replace(/\{\w+\}/g, '—');
}

/** Who did it: the person's e-mail when they have an account, else the recorded actor. */
export function auditActor(state: DashboardState, row: Pick<AuditRow, 'actor' | 'actorEmail'>): string {
  if (row.actorEmail) return row.actorEmail;
  return row.actor === 'system' ? state.t('activity.system') : row.actor;
}
