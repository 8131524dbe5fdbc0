import { InvalidArgumentError } from 'commander';

/** Left-aligned columns, for lists an operator reads in a terminal. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)];
}

/**
 * A list command's output: the table on stdout, or, when there is nothing to list, no table and
 * `empty` (what that means, and what to do next) on stderr, so a script reading stdout sees an
 * empty list rather than a lone header row.
 */
export function printTable(out: (line: string) => void, header: string[], rows: string[][], empty: string): void {
  if (rows.length === 0) {
    process.stderr.write(`${empty}\n`);
    return;
  }
  for (const line of table(header, rows)) out(line);
}

export const date = (value: Date | null | undefined): string => (value ? value.toISOString() : '-');

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError('must be a positive whole number.');
  return n;
}

export function wholeNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n)) throw new InvalidArgumentError('must be a whole number (0 or more).');
  return n;
}

export function isoDate(value: string): Date {
  const d = new Date(value);
  if (!/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(d.getTime())) throw new InvalidArgumentError('must be an ISO 8601 date or date-time, e.g. 2027-01-31T00:00:00Z.');
  return d;
}

export function unit(value: string): 'credits' | 'calls' {
  if (value !== 'credits' && value !== 'calls') throw new InvalidArgumentError('must be "credits" or "calls".');
  return value;
}
