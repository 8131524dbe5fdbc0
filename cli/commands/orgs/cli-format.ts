import { InvalidArgumentError } from 'commander';
import { endOfDayUtc } from '../../../core/auth/index.js';
import type { CallsCapTerms } from '../../../core/billing/index.js';

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

/** "1 organization", "3 organizations": a count with its noun, for the lines people read. */
export const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

export const date = (value: Date | null | undefined): string => (value ? value.toISOString() : '-');

/** Numbers are read into JavaScript numbers: past this one they would be stored wrongly. */
export const MAX_WHOLE = Number.MAX_SAFE_INTEGER;
/** A rate limit's column is a Postgres integer. */
export const MAX_RATE_LIMIT = 2_147_483_647;

/**
 * Why a number with separators is refused, for the value that has them: "1.000" is a thousand to
 * an Italian and one to an English reader, so neither reading is guessed (the dashboard's forms
 * take digits only too).
 */
export const separatorHint = (value: string): string =>
  (/^[+-]?\d+(?:[.,' _]\d+)+$/.test(value) ? ' Write it in digits only, e.g. 1000: 1.000 is a thousand in Italian but one in English, so separators are not read.' : '');

// A number too large is refused naming the limit: "must be a positive whole number" of
// 99999999999999999 said what it already was, not what was wrong.
function whole(value: string, min: 0 | 1, max: number): number {
  if (!/^\d+$/.test(value) || BigInt(value) < BigInt(min)) throw new InvalidArgumentError(`${min === 1 ? 'must be a positive whole number.' : 'must be a whole number (0 or more).'}${separatorHint(value)}`);
  if (BigInt(value) > BigInt(max)) throw new InvalidArgumentError(`must be at most ${max}.`);
  return Number(value);
}

export const positiveInt = (value: string): number => whole(value, 1, MAX_WHOLE);
export const wholeNumber = (value: string): number => whole(value, 0, MAX_WHOLE);
/** For a whole number (0 or more) up to `max`. */
export const wholeNumberUpTo = (max: number) => (value: string): number => whole(value, 0, max);

/** A calls cap of later months and where it comes from, for `org show` and `billing set-cap`. */
export function laterCapText(terms: Pick<CallsCapTerms, 'laterPeriods' | 'own' | 'planId'>): string {
  const cap = terms.laterPeriods === null ? 'no cap' : `${count(terms.laterPeriods, 'call')} per period`;
  return `${cap} (${terms.own ? "the organization's own" : terms.planId ? `plan ${terms.planId}'s` : 'no plan'})`;
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

// A date alone, or a date-time that says its zone: without one, `new Date` reads the time as
// the machine's local time (TZ=Europe/Rome moved 10:00 to 09:00Z), and it takes free text after
// a date ("2027-01-01 (note)") too.
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const DATE_FORMS = 'must be a date, YYYY-MM-DD (valid through that day, UTC), or an ISO 8601 date-time with Z or an offset, e.g. 2027-01-31T12:00:00Z or 2027-01-31T12:00:00+01:00.';

function isoDate(value: string): Date {
  const shape = DATE.exec(value) ?? DATE_TIME.exec(value);
  if (!shape) throw new InvalidArgumentError(DATE_FORMS);
  // `new Date` rolls a day past the month's end over into the next month (2027-02-30 becomes
  // 2 March) instead of refusing it: a typo would quietly move a key's expiry, so the calendar
  // date as written is checked first.
  const [year, month, day] = shape.slice(1, 4).map(Number) as [number, number, number];
  const written = value.slice(0, 10);
  if (month < 1 || month > 12) throw new InvalidArgumentError(`${written} is not a date: months run from 01 to 12.`);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day < 1 || day > daysInMonth) throw new InvalidArgumentError(`${written} is not a date: ${MONTHS[month - 1]} ${year} has days 01 to ${daysInMonth}.`);
  const [hours, minutes, seconds, zone] = [Number(shape[4] ?? 0), Number(shape[5] ?? 0), Number(shape[6] ?? 0), shape[7]];
  const zoneOk = zone === undefined || zone === 'Z' || (Number(zone.slice(1, 3)) <= 23 && Number(zone.slice(-2)) <= 59);
  if (hours > 23 || minutes > 59 || seconds > 59 || !zoneOk) throw new InvalidArgumentError(`${value} is not a time: ${DATE_FORMS}`);
  // +0100 as +01:00: the form Date reads.
  const d = new Date(zone && zone.length === 5 ? `${value.slice(0, -5)}${zone.slice(0, 3)}:${zone.slice(3)}` : value);
  if (Number.isNaN(d.getTime())) throw new InvalidArgumentError(DATE_FORMS);
  return d;
}

/** A key's expiry: a date alone (2030-12-31) is valid through that day, UTC, as in the dashboard. */
export function expiryDate(value: string): Date {
  const d = isoDate(value);
  return DATE.test(value) ? endOfDayUtc(value) : d;
}

export function unit(value: string): 'credits' | 'calls' {
  if (value !== 'credits' && value !== 'calls') throw new InvalidArgumentError('must be "credits" or "calls".');
  return value;
}
