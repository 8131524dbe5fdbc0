import { flagReasonLabel, keyLabel, type AllowanceReport } from '../../../core/billing/index.js';
import { table } from '../orgs/cli-format.js';

// The CSV is core's allowanceReportCsv (the dashboard's download has the same rows), written by
// the command with CSV's own line ends.
export type ReportFormat = 'table' | 'json';

export function renderReport(report: AllowanceReport, format: ReportFormat): string[] {
  if (format === 'json') return [JSON.stringify(report, null, 2)];
  return reportTable(report);
}

function reportTable(r: AllowanceReport): string[] {
  const out: string[] = [];
  const lines = (header: string[], rows: string[][]) => (rows.length === 0 ? ['  (none)'] : table(header, rows).map((l) => `  ${l}`));
  const usage = (x: { quantity: number; unit: string; calls: number }) => [String(x.quantity), x.unit, String(x.calls)];
  out.push(`Allowance report: ${r.organizationName} (${r.organizationId}), ${r.period}`);
  out.push(`As of: ${r.asOf === null ? `no usage counted in ${r.period}` : `${r.asOf} (the newest usage event counted in ${r.period})`}; generated ${r.generatedAt}`);
  out.push('');
  out.push(...table(['CREDITS', 'AMOUNT'], [
    ['opening balance', String(r.openingBalance)],
    ['granted', String(r.credits.granted)],
    ['topped up', String(r.credits.toppedUp)],
    ['adjusted', String(r.credits.adjusted)],
    ['period rollover', String(r.credits.rollover)],
    ['used', String(-r.credits.used)],
    ['closing balance', String(r.closingBalance)],
  ]));
  out.push(`calls used (calls-priced products only; the CALLS columns below count every call): ${r.callsUsed}`);
  out.push('', 'Grants, top-ups and adjustments:');
  // The reference before the reason, which is the long one (up to 500 characters).
  out.push(...lines(['AT', 'TYPE', 'CREDITS', 'BY', 'REFERENCE', 'REASON'], r.entries.map((e) => [e.at, e.type, String(e.credits), e.actor ?? '-', e.reference ?? '-', e.reason ?? ''])));
  out.push('', 'Usage by endpoint/tool:');
  out.push(...lines(['SOURCE', 'PRODUCT', 'QUANTITY', 'UNIT', 'CALLS'], r.byProduct.map((p) => [p.source, p.product, ...usage(p)])));
  out.push('', 'Usage by key:');
  out.push(...lines(['KEY', 'NAME', 'QUANTITY', 'UNIT', 'CALLS'], r.byKey.map((k) => [k.keyId, keyLabel(k) ?? '(deleted key)', ...usage(k)])));
  out.push('', 'Usage by day (UTC):');
  out.push(...lines(['DAY', 'QUANTITY', 'UNIT', 'CALLS'], r.byDay.map((d) => [d.day, ...usage(d)])));
  out.push('', 'Flag history:');
  out.push(...lines(['AT', 'FLAG', 'CHANGE', 'REASON'], r.flagHistory.map((f) => [f.at, f.flag, f.value ? 'set' : 'cleared', flagReasonLabel(f)])));
  return out;
}
