import { CSV_LINE_END, UTF8_BOM, type CsvSeparator } from '../core/billing/index.js';
import type { Readable } from 'node:stream';
import type { Language } from './i18n/translate.js';
import { lineStream } from './line-stream.js';
import type { DashboardContext, DashboardState } from './state.js';
import { html, type Html } from './views/html.js';

// The dashboard's CSV downloads are opened in Excel by people, not read by scripts (those run
// the CLI): each starts with a UTF-8 BOM, so Excel reads "…" and "à" as such rather than as
// cp1252, and separates fields with the list separator of Excel in the page's language, so a
// double-clicked file opens in columns. The rows are the CLI's, with its quoting and CR LF ends.

/** Excel's list separator in each language the dashboard speaks. */
const separatorOf: Record<Language, CsvSeparator> = { en: ',', it: ';' };

type SeparatorName = 'comma' | 'semicolon';
const separators: Record<SeparatorName, CsvSeparator> = { comma: ',', semicolon: ';' };
const nameOf = (separator: CsvSeparator): SeparatorName => (separator === ',' ? 'comma' : 'semicolon');

/**
 * The download's separator: `?sep=comma|semicolon` (the page's other-separator link), else the
 * page language's. Any other value is the language's, as an unknown `type` is all types.
 */
export function csvSeparator(ctx: DashboardContext): CsvSeparator {
  const asked = ctx.query.sep;
  return asked === 'comma' || asked === 'semicolon' ? separators[asked] : separatorOf[ctx.state.lang];
}

export function sendAsCsv(ctx: DashboardContext, filename: string): void {
  ctx.set('Content-Type', 'text/csv; charset=utf-8');
  ctx.set('Content-Disposition', `attachment; filename="${filename}"`);
}

/** A whole file from its lines: the BOM, then each line and its CR LF. */
export const csvFile = (lines: string[]): string => UTF8_BOM + lines.map((line) => line + CSV_LINE_END).join('');

/** The same, streamed from lines a cursor yields (dashboard/line-stream.ts). */
export const csvStream = (lines: AsyncGenerator<string>): Promise<Readable> => lineStream(lines, { lineEnd: CSV_LINE_END, start: UTF8_BOM });

/**
 * Under a page's Download CSV link: which separator the file has (the page language's), and a
 * link to the same file with the other one, for Excel set to another language.
 */
export function csvSeparatorChoice(state: DashboardState, href: string): Html {
  const { t } = state;
  const mine = separatorOf[state.lang];
  const other = nameOf(mine === ',' ? ';' : ',');
  const otherHref = `${href}${href.includes('?') ? '&' : '?'}sep=${other}`;
  return html`${t(`csv.separator.${nameOf(mine)}`)} <a href="${otherHref}" download>${t(`csv.other.${other}`)}</a>`;
}
