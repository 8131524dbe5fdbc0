import { systemReasonPattern } from '../../core/billing/index.js';
import type { DashboardState } from '../state.js';

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

// Why a calls cap changed, as core and these pages write it after 'calls cap A -> B: '.
const capReasons: Saying[] = [
  [systemReasonPattern.planCap, (r, g) => r.t('reason.plan', { plan: g.plan! })],
  [systemReasonPattern.planChanged, (r, g) => r.t('reason.planChanged', { from: g.from!, to: g.to! })],
  [new RegExp(`^${OPERATOR_DASHBOARD_REASON}$`), (r) => r.t('reason.operatorDashboard')],
];

const rowReasons: Saying[] = [
  [systemReasonPattern.includedCredits, (r, g) => r.t('reason.includedCredits', { plan: g.plan!, period: r.f.period(g.period!) })],
  [systemReasonPattern.rollover, (r, g) => r.t('reason.rollover', { credits: r.f.number(Number(g.credits)), count: Number(g.credits) })],
  [systemReasonPattern.capChange, (r, g) =>
    r.t(g.thisPeriod ? 'reason.capChangeThisPeriod' : 'reason.capChange', { from: cap(r, g.from!), to: cap(r, g.to!), why: say(r, g.why!, capReasons) ?? g.why! })],
  // Flag changes.
  [systemReasonPattern.usage, (r) => r.t('reason.usage')],
  [systemReasonPattern.periodRollover, (r, g) => r.t('reason.periodRollover', { period: r.f.period(g.period!) })],
  [systemReasonPattern.productChanged, (r, g) => r.t('reason.productChanged', { product: g.product! })],
  [systemReasonPattern.productReset, (r, g) => r.t('reason.productReset', { product: g.product! })],
];

function say(reader: Reader, reason: string, sayings: Saying[]): string | undefined {
  for (const [pattern, words] of sayings) {
    const match = pattern.exec(reason);
    if (match) return words(reader, match.groups ?? {});
  }
  return undefined;
}

/** A ledger row's or a flag change's reason in the page's language, when the system wrote it. */
export function ledgerReason(reader: Reader, reason: string): string {
  const said = say(reader, reason, rowReasons);
  if (said !== undefined) return said;
  // A flag moved by an administrative change carries that change's reason and who made it:
  // 'plan standard (system)', 'plan standard: included credits for 2026-11 (system)'.
  const byActor = /^(?<inner>.+) \((?<actor>[^()]+)\)$/s.exec(reason);
  const inner = byActor ? say(reader, byActor.groups!.inner!, [...rowReasons, ...capReasons]) : undefined;
  if (inner === undefined) return reason;
  return `${inner} (${ledgerActor(reader, byActor!.groups!.actor!)})`;
}

/** Who wrote a ledger row: a person's e-mail, a CLI user as recorded, or the system, in the page's language. */
export function ledgerActor(reader: Pick<DashboardState, 't'>, actor: string): string {
  return actor === 'system' ? reader.t('activity.system') : actor;
}
