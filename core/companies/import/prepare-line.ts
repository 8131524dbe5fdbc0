import { prepareCompany, type PreparedCompany } from '../write-companies.js';
import { parseDossierLine, type ImportRejection, type ParsedEntry } from './parse-dossier-line.js';

// What the writer consumes: a company already in its stored form, or a rejection. Parsing,
// validation and preparation are one step so it can run on the main thread or in a parser
// thread alike (see parse-pool.ts), with the same results.
export type PreparedEntry = { ok: true; line: number; company: PreparedCompany } | { ok: false; rejection: ImportRejection };

export function prepareEntry(entry: ParsedEntry): PreparedEntry {
  return entry.ok ? { ok: true, line: entry.line, company: prepareCompany(entry.dossier) } : entry;
}

/** null for a blank line (skipped, not an error). */
export function prepareLine(text: string, line: number): PreparedEntry | null {
  const entry = parseDossierLine(text, line);
  return entry === null ? null : prepareEntry(entry);
}

/** Consecutive lines starting at line number `firstLine`; blank ones leave no entry. */
export function prepareLines(lines: readonly string[], firstLine: number): PreparedEntry[] {
  const out: PreparedEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const entry = prepareLine(lines[i]!, firstLine + i);
    if (entry !== null) out.push(entry);
  }
  return out;
}
