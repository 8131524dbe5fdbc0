import { flagReasonLabel, keyLabel, type AllowanceReport } from './allowance-report.js';

// The report as CSV, shared by `cli report --format csv` and the dashboard's download, so the
// two files are the same bytes (bar `generated_at`, which says when each was made).

// A spreadsheet runs a cell that starts with = + - @ (or a tab or CR before one) as a formula.
// Key names come from customers' admins and reasons from people: a text cell that starts so is
// written with a leading apostrophe, which spreadsheets show as text (OWASP's CSV injection
// advice). Numbers are numbers, so a negative adjustment is still -500.
const FORMULA_START = /^[=+\-@\t\r]/;

/** RFC 4180 quoting: a field with a comma, quote or newline is quoted, quotes doubled. */
export function csvLine(cells: (string | number | boolean | null)[]): string {
  return cells
    .map((c) => {
      const s = c === null ? '' : typeof c === 'string' && FORMULA_START.test(c) ? `'${c}` : String(c);
      return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
    })
    .join(',');
}

/** One long table so a spreadsheet can filter by section. One string per line, no newlines. */
export function allowanceReportCsv(r: AllowanceReport): string[] {
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
  // A movement of the balance, as in the table and on the dashboard: the summary's credit rows
  // from opening_balance to used add up to closing_balance.
  summary('used', -r.credits.used);
  summary('closing_balance', r.closingBalance);
  summary('calls_used', r.callsUsed, 'calls');
  for (const e of r.entries) rows.push(['entry', e.type, e.at, e.credits, 'credits', null, [e.actor, e.reason].filter(Boolean).join(': ')]);
  for (const p of r.byProduct) rows.push(['by_product', `${p.source}:${p.product}`, null, p.quantity, p.unit, p.calls, null]);
  for (const k of r.byKey) rows.push(['by_key', k.keyId, null, k.quantity, k.unit, k.calls, keyLabel(k)]);
  for (const d of r.byDay) rows.push(['by_day', d.day, null, d.quantity, d.unit, d.calls, null]);
  for (const f of r.flagHistory) rows.push(['flag', f.flag, f.at, null, null, null, `${f.value ? 'set' : 'cleared'}${f.reason ? `: ${flagReasonLabel(f)}` : ''}`]);
  return rows.map(csvLine);
}
