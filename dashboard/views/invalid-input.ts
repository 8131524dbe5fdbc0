import { z } from 'zod';
import type { AppError } from '../../core/errors/index.js';
import type { Language, MessageKey } from '../i18n/translate.js';
import type { DashboardState } from '../state.js';

// An invalid_params refusal worded for the page's reader. Core words its refusals in English for
// every edge (CLI, API, logs); where one comes from a zod schema, the error keeps the issues,
// and here each is said again in the page's language (zod's own locales) under the label the
// form shows for its field, instead of "perSecond: Too small: expected number to be >0".
// A message a schema wrote itself (e.g. "at most 2147483647") and the refusals core words by
// hand are shown as written, except the dashboard's own below.

const wordings: Record<Language, z.core.$ZodErrorMap> = { en: z.locales.en().localeError, it: z.locales.it().localeError };

/** The dashboard forms' field names, as core's schemas name them, and the label each form shows. */
const fieldLabels: Record<string, MessageKey> = {
  name: 'common.name',
  expiresOn: 'keys.expiry',
  graceSeconds: 'keys.grace',
  email: 'members.email',
  role: 'members.role',
  period: 'common.period',
  kind: 'operator.org.kind',
  credits: 'operator.org.credits',
  reason: 'operator.org.reason',
  creditsPerPeriod: 'operator.org.creditsPerPeriod',
  callsCap: 'operator.org.callsCap',
  perSecond: 'operator.org.perSecond',
  burst: 'operator.org.burst',
  perMinute: 'operator.org.perMinute',
  product: 'operator.org.product',
  quantity: 'operator.org.measure',
  unit: 'operator.org.measure',
};

/** The operator forms' refusal of a number that is not whole (operator-routes.ts, optionalInt). */
export const WHOLE_NUMBER = 'a whole number';
/** The finance pages' refusal of a `?period=` that is not a month they can show (finance-routes.ts). */
export const PERIOD_MESSAGE = 'a month, YYYY-MM, not after the current one';
const dashboardWordings: Record<string, MessageKey> = { [WHOLE_NUMBER]: 'error.wholeNumber', [PERIOD_MESSAGE]: 'error.period' };

const text = (worded: ReturnType<z.core.$ZodErrorMap>): string | undefined => (typeof worded === 'string' ? worded : worded?.message);

function reword(issue: z.core.$ZodIssue, state: Pick<DashboardState, 'lang' | 't'>): string {
  const own = dashboardWordings[issue.message];
  if (issue.code === 'custom' && own) return state.t(own);
  // zod's English default for this issue: if the message is anything else, a schema wrote it.
  const byDefault = text(wordings.en(issue as never));
  return issue.message === byDefault ? (text(wordings[state.lang](issue as never)) ?? issue.message) : issue.message;
}

export function invalidInputMessage(state: Pick<DashboardState, 'lang' | 't'>, err: AppError): string {
  if (!err.issues || err.issues.length === 0) return err.message;
  return err.issues
    .map((issue) => {
      const path = issue.path.map(String).join('.');
      const label = path in fieldLabels ? state.t(fieldLabels[path]!) : path;
      return label === '' ? reword(issue, state) : `${label}: ${reword(issue, state)}`;
    })
    .join('; ');
}
