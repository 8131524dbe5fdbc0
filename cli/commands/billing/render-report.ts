import type { AllowanceReport } from '../../../core/billing/index.js';
import { table } from '../orgs/cli-format.js';

export type ReportFormat = 'table' | 'csv' | 'json';

/** RFC 4180 quoting: a field with a comma, quote or newline is quoted, quotes doubled. */
export function csvLine(cells: (string | number | boolean | null)[]): string {
  return cells
    .map((c) => {
      const s = c === null ? '' : String(c);
      return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
    })
    .join(',');
}

export function renderReport(report: AllowanceReport, format: ReportFormat): string[] {
  if (format === 'json') return [JSON.stringify(report, null, 2)];
  if (format === 'csv') return reportCsv(report);
  return reportTable(report);
}

// One long table so a spreadsheet can filter by section.
function reportCsv(r: AllowanceReport): string[] {
  const rows: (string | number | boolean | null)[][] = [['section', 'name', 'at', 'quantity', 'unit', 'calls', 'detail']];
  const summary = (name: string, value: number | string | null, unit: string | null = 'credits') => rows.push(['summary', name, null, value, unit, null, null]);
  summary('organization', r.organizationId, null);
  summary('period', r.period, null);
  summary('as_of', r.asOf, null);
  summary('generated_at', r.generatedAt, null);
  summary('opening_balance', r.openingBalance);
  summary('granted', r.credits.granted);
  summary('topped_up', r.credits.toppedUp);
  summary('adjusted', r.credits.adjusted);
  summary('rollover', r.credits.rollover);
  summary('used', r.credits.used);
  summary('closing_balance', r.closingBalance);
  summary('calls_used', r.callsUsed, 'calls');
  for (const e of r.entries) rows.push(['entry', e.type, e.at, e.credits, 'credits', null, [e.actor, e.reason].filter(Boolean).join(': ')]);
  for (const p of r.byProduct) rows.push(['by_product', `${p.source}:${p.product}`, null, p.quantity, p.unit, p.calls, null]);
  for (const k of r.byKey) rows.push(['by_key', k.keyId, null, k.quantity, k.unit, k.calls, null]);
  for (const d of r.byDay) rows.push(['by_day', d.day, null, d.quantity, d.unit, d.calls, null]);
  for (const f of r.flagHistory) rows.push(['flag', f.flag, f.at, null, null, null, `${f.value ? 'set' : 'cleared'}${f.reason ? `: ${f.reason}` : ''}`]);
  return rows.map(csvLine);
}

function reportTable(r: AllowanceReport): string[] {
  const out: string[] = [];
  const lines = (header: string[], rows: string[][]) => (rows.length === 0 ? ['  (none)'] : table(header, rows).map((l) => `  ${l}`));
  const usage = (x: { quantity: number; unit: string; calls: number }) => [String(x.quantity), x.unit, String(x.calls)];
  out.push(`Allowance report: ${r.organizationName} (${r.organizationId}), ${r.period}`);
  out.push(`As of: ${r.asOf ?? 'no usage applied yet'} (newest usage event applied); generated ${r.generatedAt}`);
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
  out.push(`calls used (calls-priced): ${r.callsUsed}`);
  out.push('', 'Grants, top-ups and adjustments:');
  out.push(...lines(['AT', 'TYPE', 'CREDITS', 'BY', 'REASON'], r.entries.map((e) => [e.at, e.type, String(e.credits), e.actor ?? '-', e.reason ?? ''])));
  out.push('', 'Usage by endpoint/tool:');
  out.push(...lines(['SOURCE', 'PRODUCT', 'QUANTITY', 'UNIT', 'CALLS'], r.byProduct.map((p) => [p.source, p.product, ...usage(p)])));
  out.push('', 'Usage by key:');
  out.push(...lines(['KEY', 'QUANTITY', 'UNIT', 'CALLS'], r.byKey.map((k) => [k.keyId, ...usage(k)])));
  out.push('', 'Usage by day (UTC):');
  out.push(...lines(['DAY', 'QUANTITY', 'UNIT', 'CALLS'], r.byDay.map((d) => [d.day, ...usage(d)])));
  out.push('', 'Flag history:');
  out.push(...lines(['AT', 'FLAG', 'CHANGE', 'REASON'], r.flagHistory.map((f) => [f.at, f.flag, f.value ? 'set' : 'cleared', f.reason ?? ''])));
  return out;
}
