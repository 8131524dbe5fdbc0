import { flagReasonLabel, keyLabel, type AllowanceReport } from './allowance-report.js';
import { csvLine, type CsvSeparator } from './csv-line.js';

// The report as CSV, shared by `cli report --format csv` and the dashboard's download, so the
// two hold the same rows (bar `generated_at`, which says when each was made).

// `reference` (a credit entry's invoice number, empty on other rows) was added last on 27 Nov
// 2026, so scripts that read the columns by position still find the others where they were.
const HEADER = ['section', 'name', 'at', 'quantity', 'unit', 'calls', 'detail', 'reference'];

/** One long table so a spreadsheet can filter by section. One string per line, no line ends. */
export function allowanceReportCsv(r: AllowanceReport, separator: CsvSeparator = ','): string[] {
  const rows: (string | number | boolean | null)[][] = [HEADER];
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
  // A movement of the balance, as in the table and on the dashboard: the summary's credit rows
  // from opening_balance to used add up to closing_balance.
  summary('used', -r.credits.used);
  summary('closing_balance', r.closingBalance);
  summary('calls_used', r.callsUsed, 'calls');
  for (const e of r.entries) rows.push(['entry', e.type, e.at, e.credits, 'credits', null, [e.actor, e.reason].filter(Boolean).join(': '), e.reference]);
  for (const p of r.byProduct) rows.push(['by_product', `${p.source}:${p.product}`, null, p.quantity, p.unit, p.calls, null]);
  for (const k of r.byKey) rows.push(['by_key', k.keyId, null, k.quantity, k.unit, k.calls, keyLabel(k)]);
  for (const d of r.byDay) rows.push(['by_day', d.day, null, d.quantity, d.unit, d.calls, null]);
  for (const f of r.flagHistory) rows.push(['flag', f.flag, f.at, null, null, null, `${f.value ? 'set' : 'cleared'}${f.reason ? `: ${flagReasonLabel(f)}` : ''}`]);
  // Every line as wide as the header: the rows without a reference end with an empty one.
  return rows.map((row) => csvLine([...row, ...Array<null>(HEADER.length - row.length).fill(null)], separator));
}
