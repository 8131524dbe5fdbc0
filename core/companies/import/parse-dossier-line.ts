import type { z } from 'zod';
import { escapeUnstorable, unstorableTexts } from '../../db/storable-text.js';
import { MAX_LINE_CHARACTERS, readTooLongLine } from './line-blocks.js';
import { companyDossierSchema, type CompanyDossier } from '../schemas/index.js';

// One line of the import file → a validated dossier, or a rejection an operator can act on:
// the line number and a precise reason (the JSON syntax error, or each failing field path).

export interface ImportRejection {
  /** 1-based line number in the file (or position in the stream). */
  line: number;
  /** The line's fiscalCode when it could be read, to find the company in the source. */
  fiscalCode: string | null;
  reason: string;
}

export type ParsedEntry = { ok: true; line: number; dossier: CompanyDossier } | { ok: false; rejection: ImportRejection };

const MAX_ISSUES = 5;

/** ['years', 2, 'year'] → "years[2].year". */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out === '' ? String(key) : `.${String(key)}`;
  }
  return out === '' ? '(root)' : out;
}

export function formatIssues(issues: readonly z.core.$ZodIssue[]): string {
  const shown = issues.slice(0, MAX_ISSUES).map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
  if (issues.length > MAX_ISSUES) shown.push(`… and ${issues.length - MAX_ISSUES} more`);
  return shown.join('; ');
}

const fiscalCodeOf = (value: unknown): string | null => {
  const code = (value as { fiscalCode?: unknown } | null)?.fiscalCode;
  return typeof code === 'string' ? code.trim().toUpperCase() : null;
};

/** Validates an already-parsed value (used by the in-process sample loader too). */
export function parseDossierValue(value: unknown, line: number): ParsedEntry {
  const result = companyDossierSchema.safeParse(value);
  if (result.success) return { ok: true, line, dossier: result.data };
  return { ok: false, rejection: { line, fiscalCode: escapeUnstorable(fiscalCodeOf(value) ?? '') || null, reason: formatIssues(result.error.issues) } };
}

// Bytes that are not UTF-8 decode to U+FFFD (line-blocks.ts). Kept, a Latin-1 "Forlì" would be
// stored as "Forl\uFFFD" for good; a company's data never holds that character on purpose.
const NOT_UTF8 = '\uFFFD';
const NOT_UTF8_MESSAGE = 'not UTF-8 text: the line holds bytes that are not UTF-8 (e.g. Latin-1 "ì"), which would be stored as "\uFFFD"; save the file as UTF-8';

// A file with no "\n" (CR-only line ends) or a JSON array on one line is one long line: say so.
const LONG_LINE_HINT = '(CR-only line ends, or a JSON array instead of one object per line?)';
// A carriage return inside a line (its "\r\n" end is not in it) is a line end of an old Mac
// file, or of one exported so: the next object follows it, and JSON.parse says only
// "Unexpected non-whitespace character after JSON at position 9970". Said however short the line.
const CR_ONLY_HINT = "(CR-only line ends? the line holds a carriage return followed by more: end lines with \"\\n\", e.g. `tr '\\r' '\\n' < FILE > fixed.jsonl`)";
// JSON carries NUL and UTF-16 surrogates as escapes (\u0000, \ud800 to \udfff); decoded
// UTF-8 holds surrogates only in pairs (an emoji), so a raw lone one comes only in a caller's
// own strings. Only a line holding either is searched field by field. Tested in this order, most lines cost one includes(): a text
// V8 holds in one byte per character (no character past U+00FF) has no surrogate to find.
const UNSTORABLE_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;
const SURROGATE = /[\ud800-\udfff]/;
const mayHoldUnstorable = (text: string) => (text.includes('\\u') && UNSTORABLE_ESCAPE.test(text)) || SURROGATE.test(text);

/** null for a blank line (skipped, not an error). */
export function parseDossierLine(text: string, line: number): ParsedEntry | null {
  const tooLong = readTooLongLine(text);
  if (tooLong !== null) {
    const what = tooLong.ended ? `${tooLong.bytes} bytes` : `no line break in ${tooLong.bytes} bytes to the end of the input`;
    return { ok: false, rejection: { line, fiscalCode: null, reason: `line too long: ${what}, at most ${MAX_LINE_CHARACTERS} characters for one company ${LONG_LINE_HINT}` } };
  }
  if (text.length > MAX_LINE_CHARACTERS) {
    const hint = text.includes('\r') || text.trimStart().startsWith('[') ? ` ${LONG_LINE_HINT}` : '';
    return { ok: false, rejection: { line, fiscalCode: null, reason: `line too long: ${text.length} characters, at most ${MAX_LINE_CHARACTERS} for one company${hint}` } };
  }
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (trimmed.includes(NOT_UTF8)) return { ok: false, rejection: { line, fiscalCode: null, reason: NOT_UTF8_MESSAGE } };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (err) {
    const hint = trimmed.includes('\r') ? ` ${CR_ONLY_HINT}` : '';
    return { ok: false, rejection: { line, fiscalCode: null, reason: `invalid JSON: ${(err as Error).message}${hint}` } };
  }
  // Text the store cannot hold (a NUL, a surrogate not in a pair): a field-by-field reason
  // here, rather than the database refusing the whole company, and its batch with it.
  if (mayHoldUnstorable(trimmed)) {
    const found = unstorableTexts(value);
    if (found.length > 0) {
      const reason = found.map((f) => `${formatIssuePath(f.path)}: ${f.reason}`).join('; ');
      return { ok: false, rejection: { line, fiscalCode: escapeUnstorable(fiscalCodeOf(value) ?? '') || null, reason } };
    }
  }
  return parseDossierValue(value, line);
}
