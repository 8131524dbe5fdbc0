import { flagReasonLabel, systemReasonPattern } from '../../core/billing/index.js';
import type { DashboardState } from '../state.js';
import { measure } from './units.js';

// The reasons the system writes on ledger rows and flag changes, in English, for every reader
// (CLI, CSV, exports). The database keeps them as written; the pages say the ones core's own
// patterns recognise (core/billing/system-reasons.ts) in their own language; a reason a person
// typed, or one written otherwise, shows as it is.

/** The reason the operator pages give a calls cap they change (operator-routes.ts). */
export const OPERATOR_DASHBOARD_REASON = 'set in the operator dashboard';

type Reader = Pick<DashboardState, 't' | 'f'>;
type Groups = Record<string, string | undefined>;

const cap = (reader: Reader, value: string) => (value === 'none' ? reader.t('common.noCap') : reader.f.number(Number(value)));

type Saying = [RegExp, (reader: Reader, g: Groups) => string];

// A change of plan: why a calls cap moved with it, and why a flag did.
const planChanged: Saying = [systemReasonPattern.planChanged, (r, g) => r.t('reason.planChanged', { from: g.from!, to: g.to! })];

// Why a calls cap changed, as core and these pages write it after 'calls cap A -> B: '.
const capReasons: Saying[] = [
  [systemReasonPattern.planCap, (r, g) => r.t('reason.plan', { plan: g.plan! })],
  planChanged,
  // Its own why is a person's (or these pages' own, said in the page's language).
  [systemReasonPattern.planCapAgain, (r, g) => r.t('reason.planCapAgain', { plan: g.plan!, why: say(r, g.why!, capReasons) ?? g.why! })],
  [new RegExp(`^${OPERATOR_DASHBOARD_REASON}$`), (r) => r.t('reason.operatorDashboard')],
  [systemReasonPattern.rolloverCap, (r, g) => {
    const period = r.f.period(g.period!);
    return g.own ? r.t('reason.rolloverCapOwn', { period }) : g.plan ? r.t('reason.rolloverCapPlan', { period, plan: g.plan }) : r.t('reason.rolloverCapNoPlan', { period });
  }],
];

const rowReasons: Saying[] = [
  [systemReasonPattern.includedCredits, (r, g) => r.t('reason.includedCredits', { plan: g.plan!, period: r.f.period(g.period!) })],
  [systemReasonPattern.rollover, (r, g) => r.t('reason.rollover', { credits: r.f.number(Number(g.credits)), count: Number(g.credits) })],
  [systemReasonPattern.capChange, (r, g) =>
    r.t(g.thisPeriod ? 'reason.capChangeThisPeriod' : 'reason.capChange', { from: cap(r, g.from!), to: cap(r, g.to!), why: say(r, g.why!, capReasons) ?? g.why! })],
  [systemReasonPattern.refusedCall, (r, g) => r.t('reason.refusedCall', { measure: measure(r, Number(g.quantity), g.unit!), product: g.product! })],
  [systemReasonPattern.refusedCallRefund, (r) => r.t('reason.refusedCallRefund')],
  // Flag changes.
  [systemReasonPattern.usage, (r) => r.t('reason.usage')],
  [systemReasonPattern.periodRollover, (r, g) => r.t('reason.periodRollover', { period: r.f.period(g.period!) })],
  [systemReasonPattern.productChanged, (r, g) => r.t('reason.productChanged', { product: g.product! })],
  [systemReasonPattern.productReset, (r, g) => r.t('reason.productReset', { product: g.product! })],
  planChanged,
];

function say(reader: Reader, reason: string, sayings: Saying[]): string | undefined {
  for (const [pattern, words] of sayings) {
    const match = pattern.exec(reason);
    if (match) return words(reader, match.groups ?? {});
  }
  return undefined;
}

/** A ledger row's reason in the page's language, when the system wrote it. */
export function ledgerReason(reader: Reader, reason: string): string {
  return say(reader, reason, rowReasons) ?? reason;
}

/**
 * A flag change's reason in the page's language, with who made the change when a person or
 * the system's own administration did ('plan standard (system)', 'invoice 7 (maria@…)'): an
 * administrative change gives its own reason, which may be a cap's.
 */
export function flagReason(reader: Reader, change: { reason: string | null; actor: string | null }): string {
  const reason = change.reason ?? '';
  if (change.actor === null) return ledgerReason(reader, reason);
  return flagReasonLabel({ reason, actor: ledgerActor(reader, change.actor) }, say(reader, reason, [...rowReasons, ...capReasons]) ?? reason);
}

/** Who wrote a ledger row: a person's e-mail, a CLI user as recorded, or the system, in the page's language. */
export function ledgerActor(reader: Pick<DashboardState, 't'>, actor: string): string {
  return actor === 'system' ? reader.t('activity.system') : actor;
}
