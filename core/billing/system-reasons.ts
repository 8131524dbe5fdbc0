// The reasons the system writes on ledger rows and flag changes, in English, as every reader
// gets them (CLI, CSV, exports). Each is written here and read back here, the template next to
// the pattern that recognises it, so the dashboard can say them in its own language
// (dashboard/views/ledger-reasons.ts) without a second copy of the wording to drift from this one.

type CapValue = number | null;
const capText = (value: CapValue) => (value === null ? 'none' : String(value));

export const systemReason = {
  includedCredits: (plan: string, period: string) => `plan ${plan}: included credits for ${period}`,
  rollover: (credits: number) => `calendar month rollover: ${credits} credits granted, calls count restarts`,
  capChange: (from: CapValue, to: CapValue, thisPeriodOnly: boolean, why: string) => `calls cap ${capText(from)} -> ${capText(to)}${thisPeriodOnly ? ' (this period only)' : ''}: ${why}`,
  // Why a calls cap changed with a plan (the `why` of capChange).
  planCap: (plan: string) => `plan ${plan}`,
  planChanged: (from: string, to: string) => `plan changed from ${from} to ${to}`,
  // The organization's own cap dropped for its plan's (usePlanCallsCap), with the person's why.
  planCapAgain: (plan: string, why: string) => `back to the cap of plan ${plan}: ${why}`,
  // The cap a month gets at its rollover, when it is not the one the month before had (the `why` of capChange).
  rolloverCap: (period: string, from: 'own' | { plan: string | null }) =>
    `period rollover to ${period}: ${from === 'own' ? "the organization's own cap" : from.plan === null ? 'no plan' : `the cap of plan ${from.plan}`}`,
  // A call refused (503) before its usage event was confirmed: its `refused` row, worth nothing
  // (record-refused-calls.ts). Rows written before this was here have the same text.
  refusedCall: (quantity: number, unit: string, product: string) => `call refused (503) before its usage event was confirmed: ${quantity} ${unit} for ${product}, not charged`,
  // A charge given back: its call was refused (503) after the worker had applied its event.
  refusedCallRefund: () => 'refund: call refused (503) after it was charged',
  // Flag changes.
  usage: () => 'usage',
  periodRollover: (period: string) => `period rollover to ${period}`,
  productChanged: (product: string) => `product ${product} changed`,
  productReset: (product: string) => `product ${product} back to the plan`,
};

/** What each of systemReason's sentences matches, its values as named groups (a cap's `none` as written). */
export const systemReasonPattern: Record<keyof typeof systemReason, RegExp> = {
  includedCredits: /^plan (?<plan>\S+): included credits for (?<period>\d{4}-\d{2})$/,
  rollover: /^calendar month rollover: (?<credits>\d+) credits granted, calls count restarts$/,
  capChange: /^calls cap (?<from>\d+|none) -> (?<to>\d+|none)(?<thisPeriod> \(this period only\))?: (?<why>.*)$/s,
  planCap: /^plan (?<plan>\S+)$/,
  planChanged: /^plan changed from (?<from>\S+) to (?<to>\S+)$/,
  planCapAgain: /^back to the cap of plan (?<plan>\S+): (?<why>.*)$/s,
  rolloverCap: /^period rollover to (?<period>\d{4}-\d{2}): (?:(?<own>the organization's own cap)|the cap of plan (?<plan>\S+)|(?<noPlan>no plan))$/,
  // A product is any text a usage event holds (commas, line breaks): the row's last ", not charged" ends it.
  refusedCall: /^call refused \(503\) before its usage event was confirmed: (?<quantity>\d+) (?<unit>credits|calls) for (?<product>.+), not charged$/s,
  refusedCallRefund: /^refund: call refused \(503\) after it was charged$/,
  usage: /^usage$/,
  periodRollover: /^period rollover to (?<period>\d{4}-\d{2})$/,
  productChanged: /^product (?<product>\S+) changed$/,
  productReset: /^product (?<product>\S+) back to the plan$/,
};
