// One line of the CSV files we write (the allowance report, the ledger export), the same for the
// CLI and the dashboard's downloads, so the two can be the same rows.

/**
 * Between fields: a comma (RFC 4180; scripts, and Excel in English) or a semicolon, which Excel
 * reads as its list separator in Italian and the other languages whose decimal mark is a comma:
 * a comma-separated file double-clicked there lands in one column.
 */
export type CsvSeparator = ',' | ';';

/** RFC 4180's line end, in every file: CR LF. */
export const CSV_LINE_END = '\r\n';

/**
 * The UTF-8 byte order mark. Excel reads a CSV without it as the system's ANSI code page
 * (cp1252 in Italy): the key label's "…" (E2 80 A6) came out as "â€¦", accents likewise. The
 * dashboard's downloads, which people open in Excel, start with it; the CLI's output, which
 * scripts read, does not.
 */
export const UTF8_BOM = '\uFEFF';

// A spreadsheet runs a cell that starts with = + - @ (or a tab or CR before one) as a formula.
// Key names come from customers' admins and reasons from people: a text cell that starts so is
// written with a leading apostrophe, which spreadsheets show as text (OWASP's CSV injection
// advice). Numbers are numbers, so a negative adjustment is still -500.
const FORMULA_START = /^[=+\-@\t\r]/;

// Either separator, not only the one in use: a file reads the same whichever one a reader (or
// Excel's import wizard) splits on, and a semicolon file is the comma file with the separators
// between fields swapped.
const NEEDS_QUOTES = /[",;\r\n]/;

/**
 * RFC 4180 quoting: a field holding a comma, a semicolon, a quote, a CR or a LF is quoted, its
 * quotes doubled. No line end: the caller adds CSV_LINE_END.
 */
export function csvLine(cells: (string | number | boolean | null)[], separator: CsvSeparator = ','): string {
  return cells
    .map((c) => {
      const s = c === null ? '' : typeof c === 'string' && FORMULA_START.test(c) ? `'${c}` : String(c);
      return NEEDS_QUOTES.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
    })
    .join(separator);
}
