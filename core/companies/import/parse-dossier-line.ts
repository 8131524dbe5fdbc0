import type { z } from 'zod';
import { escapeNul, NUL_MESSAGE, nulPaths } from '../../db/storable-text.js';
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
  return { ok: false, rejection: { line, fiscalCode: escapeNul(fiscalCodeOf(value) ?? '') || null, reason: formatIssues(result.error.issues) } };
}

/** null for a blank line (skipped, not an error). */
// Bytes that are not UTF-8 decode to U+FFFD (line-blocks.ts). Kept, a Latin-1 "Forlì" would be
// stored as "Forl\uFFFD" for good; a company's data never holds that character on purpose.
const NOT_UTF8 = '\uFFFD';
const NOT_UTF8_MESSAGE = 'not UTF-8 text: the line holds bytes that are not UTF-8 (e.g. Latin-1 "ì"), which would be stored as "\uFFFD"; save the file as UTF-8';

/** A company's line, at most: ~300 times a sample company's, and no copy of a runaway file into the store. */
export const MAX_LINE_CHARACTERS = 4 * 1024 * 1024;

export function parseDossierLine(text: string, line: number): ParsedEntry | null {
  if (text.length > MAX_LINE_CHARACTERS) {
    return { ok: false, rejection: { line, fiscalCode: null, reason: `line too long: ${text.length} characters, at most ${MAX_LINE_CHARACTERS} for one company` } };
  }
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (trimmed.includes(NOT_UTF8)) return { ok: false, rejection: { line, fiscalCode: null, reason: NOT_UTF8_MESSAGE } };
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch (err) {
    return { ok: false, rejection: { line, fiscalCode: null, reason: `invalid JSON: ${(err as Error).message}` } };
  }
  // JSON can carry a NUL only as the escape \u0000; the store cannot hold one (a field-by-field
  // reason here, rather than the database refusing the whole company).
  if (trimmed.includes('\\u0000')) {
    const paths = nulPaths(value);
    if (paths.length > 0) return { ok: false, rejection: { line, fiscalCode: escapeNul(fiscalCodeOf(value) ?? '') || null, reason: paths.map((p) => `${formatIssuePath(p)}: ${NUL_MESSAGE}`).join('; ') } };
  }
  return parseDossierValue(value, line);
}
