import { z } from 'zod';
import { PRIVATE_WEBHOOK_TARGET, THRESHOLD_ALREADY_SET } from '../../core/alerts/index.js';
import { ALREADY_MEMBER, NOT_AN_EMAIL, PASSWORD_MISMATCH, RESET_REFUSED } from '../../core/dashboard-auth/index.js';
import { NAME_TAKEN, REFERENCE_USED } from '../../core/billing/index.js';
import { CONTROL_MESSAGE } from '../../core/db/index.js';
import { NO_PLUS_SIGN, WHOLE_NUMBER, type AppError } from '../../core/errors/index.js';
import type { Language, MessageKey } from '../i18n/translate.js';
import type { DashboardState } from '../state.js';

// An invalid_params refusal worded for the page's reader. Core words its refusals in English for
// every edge (CLI, API, logs); here each is said again in the page's language, under the label
// the form shows for its field, instead of "perSecond: Too small: expected number to be >0":
// - an issue of a zod schema (the error keeps them) in zod's own words for that language;
// - a message a schema wrote itself ("at most 200 characters") or a detail core words by hand
//   ("required", "a non-zero integer") from the table below.
// A refusal whose details the table does not know is shown as core wrote it, in English.

const wordings: Record<Language, z.core.$ZodErrorMap> = { en: z.locales.en().localeError, it: z.locales.it().localeError };

/** The dashboard forms' field names, as core's schemas name them, and the label each form shows. */
const fieldLabels: Record<string, MessageKey> = {
  name: 'common.name',
  expiresOn: 'keys.expiry',
  mode: 'keys.mode',
  graceSeconds: 'keys.grace',
  email: 'members.email',
  password: 'invite.password',
  currentPassword: 'account.currentPassword',
  newPassword: 'account.newPassword',
  confirmPassword: 'account.confirmPassword',
  role: 'members.role',
  period: 'common.period',
  kind: 'operator.org.kind',
  credits: 'operator.org.credits',
  reason: 'operator.org.reason',
  reference: 'operator.org.reference',
  creditsPerPeriod: 'operator.org.creditsPerPeriod',
  callsCap: 'operator.org.callsCap',
  perSecond: 'operator.org.perSecond',
  burst: 'operator.org.burst',
  perMinute: 'operator.org.perMinute',
  product: 'operator.org.product',
  quantity: 'operator.org.measure',
  unit: 'operator.org.measure',
  'body.expiresAt': 'keys.expiry',
  webhookUrl: 'alerts.webhookUrl',
  value: 'alerts.value',
};

/** The keys form's refusal of a mode other than its two (keys-routes.ts): only a hand-made request sends one. */
export const KEY_MODE_REFUSED = 'must be live or test';

/** The alerts form's refusal of a condition other than its two (alerts-routes.ts): only a hand-made request sends one. */
export const THRESHOLD_KIND_REFUSED = 'must be one of the conditions the form offers';

/** The members forms' refusal of a role other than admin or finance (members-routes.ts): only a hand-made request sends one. */
export const MEMBER_ROLE_REFUSED = 'must be one of the roles the form offers: admin or finance';

/** The credits form's refusal of "+500" (operator-routes.ts): an adjustment's sign is a minus only. */
export const CREDITS_PLUS_SIGN = 'a whole number without a + sign: credits are added as 500; an adjustment removes them as -500';
/** The finance pages' refusal of a `?period=` that is not a month they can show (finance-routes.ts). */
export const PERIOD_MESSAGE = 'a month, YYYY-MM, not after the current one';

/** A message as written, matched whole ("+" and "." as themselves). */
const exactly = (message: string) => new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);

/** Messages written in English by schemas and core, and how each page says them. */
const ownWordings: [RegExp, MessageKey][] = [
  [new RegExp(`^${WHOLE_NUMBER}$`), 'error.wholeNumber'],
  [exactly(NO_PLUS_SIGN), 'error.msg.plusSign'],
  [exactly(CREDITS_PLUS_SIGN), 'error.msg.creditsPlusSign'],
  [new RegExp(`^${PERIOD_MESSAGE}$`), 'error.period'],
  [/^must not be empty$/, 'error.msg.notEmpty'],
  [new RegExp(`^${CONTROL_MESSAGE}$`), 'error.msg.controlCharacters'],
  [/^at most (?<n>\d+) characters$/, 'error.msg.atMostCharacters'],
  [/^at least (?<n>\d+) characters$/, 'error.msg.atLeastCharacters'],
  [new RegExp(`^${PASSWORD_MISMATCH}$`), 'error.msg.passwordMismatch'],
  [/^at most (?<n>\d+)$/, 'error.msg.atMost'],
  [/^at least (?<n>-\d+)$/, 'error.msg.atLeast'],
  [/^must be a date as YYYY-MM-DD/, 'error.msg.expiryDate'],
  [/^must be in the future$/, 'error.msg.future'],
  [/^a non-negative integer$/, 'error.msg.nonNegativeInteger'],
  [/^a non-zero integer$/, 'error.msg.nonZeroInteger'],
  [/^must be positive$/, 'error.msg.creditsAdd'],
  [/^too large for the balance$/, 'error.msg.balanceBound'],
  [exactly(REFERENCE_USED), 'error.msg.referenceUsed'],
  [/^required$/, 'error.msg.required'],
  [/^not in the product catalogue$/, 'error.msg.unknownProduct'],
  [exactly(KEY_MODE_REFUSED), 'error.msg.keyMode'],
  [exactly(THRESHOLD_KIND_REFUSED), 'error.msg.thresholdKind'],
  [exactly(MEMBER_ROLE_REFUSED), 'error.msg.memberRole'],
  // Back to the plan's calls cap without a plan (core/billing/adjust-allowance.ts, usePlanCallsCap).
  [/^the organization has no plan: no plan's cap to go back to$/, 'error.msg.noPlanCap'],
  // Rate limits that contradict each other (core/billing/plans/manage-organizations.ts).
  [/^must be at least the per-second limit \((?<n>\d+)\)$/, 'error.msg.belowPerSecond'],
  // The alerts forms (core/alerts/alert-settings.ts).
  [/^an http\(s\) URL$/, 'alerts.error.webhookUrl'],
  [new RegExp(`^${PRIVATE_WEBHOOK_TARGET}$`), 'alerts.error.webhookPrivate'],
  [/^out of range$/, 'alerts.error.threshold'],
  [new RegExp(`^${THRESHOLD_ALREADY_SET}$`), 'alerts.error.duplicate'],
  // An invitation to someone who is already a member (core/dashboard-auth/invitations.ts).
  [new RegExp(`^${ALREADY_MEMBER.admin}$`), 'error.msg.alreadyAdmin'],
  [new RegExp(`^${ALREADY_MEMBER.finance}$`), 'error.msg.alreadyFinance'],
  [new RegExp(`^${ALREADY_MEMBER.lower}$`), 'error.msg.cannotLowerRole'],
  // A password reset link an admin may not make (core/dashboard-auth/password-resets.ts).
  [new RegExp(`^${RESET_REFUSED.own}$`), 'error.msg.resetOwn'],
  [new RegExp(`^${RESET_REFUSED.elsewhere}$`), 'error.msg.resetElsewhere'],
  [new RegExp(`^${RESET_REFUSED.operator}$`), 'error.msg.resetOperator'],
  // A name another organization has (core/billing/plans/organization-names.ts).
  [new RegExp(`^${NAME_TAKEN} (?<organizationId>org_[0-9A-Za-z]+)$`), 'error.msg.nameTaken'],
  // Not zod's "Invalid email address" ("Input non valido: indirizzo email"): what to type instead.
  [new RegExp(`^${NOT_AN_EMAIL}$`), 'error.msg.email'],
];

type Reader = Pick<DashboardState, 'lang' | 't'>;

/** A message of the table in the reader's language, or undefined. */
function ownWording(message: string, reader: Reader): string | undefined {
  for (const [pattern, key] of ownWordings) {
    const match = pattern.exec(message);
    if (match) return reader.t(key, match.groups);
  }
  return undefined;
}

const text = (worded: ReturnType<z.core.$ZodErrorMap>): string | undefined => (typeof worded === 'string' ? worded : worded?.message);

function reword(issue: z.core.$ZodIssue, reader: Reader): string {
  // zod's English default for this issue: if the message is anything else, a schema (or the
  // dashboard) wrote it.
  const byDefault = text(wordings.en(issue as never));
  if (issue.message === byDefault) return text(wordings[reader.lang](issue as never)) ?? issue.message;
  return ownWording(issue.message, reader) ?? issue.message;
}

/** Labels a form shows in place of the table's, e.g. the invitation page's "Your name". */
export type LabelOverrides = Partial<Record<string, MessageKey>>;

const labelled = (reader: Reader, path: string, message: string, overrides: LabelOverrides) => {
  const label = overrides[path] ?? fieldLabels[path];
  return label ? `${reader.t(label)}: ${message}` : path === '' ? message : `${path}: ${message}`;
};

/**
 * What to show under each refused field, by the field's name (as core's schemas name it), in
 * the reader's language; a refusal the table does not know, as core wrote it.
 */
export function fieldRefusals(reader: Reader, err: AppError): Partial<Record<string, string>> {
  const said = err.issues && err.issues.length > 0
    ? err.issues.map((issue) => ({ path: issue.path.map(String).join('.'), message: reword(issue, reader) }))
    : (err.details ?? []).map((d) => ({ path: d.path, message: ownWording(d.message, reader) ?? d.message }));
  const refusals: Partial<Record<string, string>> = {};
  for (const { path, message } of said) refusals[path] = refusals[path] ? `${refusals[path]}; ${message}` : message;
  return refusals;
}

export function invalidInputMessage(reader: Reader, err: AppError, overrides: LabelOverrides = {}): string {
  if (err.issues && err.issues.length > 0) return err.issues.map((issue) => labelled(reader, issue.path.map(String).join('.'), reword(issue, reader), overrides)).join('; ');
  // A refusal core worded by hand: its details, when the table knows every one of them.
  const details = (err.details ?? []).map((d) => ({ path: d.path, worded: ownWording(d.message, reader) }));
  if (details.length > 0 && details.every((d) => d.worded !== undefined)) return details.map((d) => labelled(reader, d.path, d.worded!, overrides)).join('; ');
  return err.message;
}
