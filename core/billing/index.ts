export { productCatalogue, findProduct, type Product, type ProductSlug, type EndpointSlug, type ToolName } from './products.js';
export * from './plans/index.js';
// Usage, allowances, ledger and reports (the billing pipeline).
export { applyUsageBatch, type ApplyUsageOptions } from './apply-usage-batch.js';
export { recordRefusedCalls } from './record-refused-calls.js';
export { changeCredits, MAX_REASON, MAX_REFERENCE, REFERENCE_USED, referencedEventId, setCallsCap, usePlanCallsCap, type AllowanceSnapshot, type PlanCapSnapshot, type CreditChangeKind, type AdministrationInput } from './adjust-allowance.js';
export { evaluateFlags, cheapestCreditCalls, type AllowanceFlag, type Flags } from './allowance-flags.js';
export { buildAllowanceReport, flagReasonLabel, keyLabel, type AllowanceReport } from './allowance-report.js';
export { allowanceReportCsv } from './allowance-report-csv.js';
export { csvLine, CSV_LINE_END, UTF8_BOM, type CsvSeparator } from './csv-line.js';
export { FIRST_PERIOD, isPeriod, LAST_PERIOD, nextPeriod, periodStart, secondsUntilNextPeriod } from './billing-period.js';
export { exportLedger, ledgerColumns, type LedgerEntry } from './ledger-export.js';
export { ledgerCsvLines } from './ledger-csv.js';
export { reconcileLedger, type ReconcileDifference, type ReconcileResult } from './reconcile-ledger.js';
export { countOpenDeadLetters, replayDeadLetters, type ReplayDeadLettersOptions, type ReplayOutcome, type ReplayResult } from './replay-dead-letters.js';
export { rebuildUsageTotals, type RebuiltUsageTotals } from './rebuild-usage-totals.js';
export { rollOverDueAllowances } from './roll-over-period.js';
export { callsCapTerms, periodTerms, type CallsCapTerms, type PeriodTerms } from './period-terms.js';
export { systemReason, systemReasonPattern } from './system-reasons.js';
