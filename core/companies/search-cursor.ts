import { createHash } from 'node:crypto';
import { holdsNul } from '../db/storable-text.js';
import { AppError } from '../errors/index.js';

// Opaque keyset cursors for the ranked searches. A cursor carries the sort key of the last row
// returned plus a fingerprint of the query and filters it belongs to, so a cursor replayed
// with different criteria is refused instead of silently skipping or repeating rows.

export interface CursorPosition {
  /** Relevance of the last row, as the exact decimal string Postgres produced. */
  score: string;
  /** Secondary sort key (a name) of the last row. */
  name: string;
  /** Tie-breaker of the last row (a company id, or '' when the name is unique). */
  id: string;
  /** Second sort key of a company name search: the whole name's similarity to the query, as
   * Postgres printed it. Absent for the other searches. */
  closeness?: string;
  /** A page before this one (of a company name search) said truncated: every later page says so
   * too, as companies may have been left out before it (an agent reads the last page's flag). */
  truncated?: boolean;
}

/**
 * A search's text as its cursor knows it: the searches match and rank it without regard to
 * case or runs of spaces, so "Rossi" and "ROSSI  " are the same search and either may carry
 * the other's cursor (an agent retyping its query between pages).
 */
export const searchTextKey = (text: string) => text.trim().replace(/\s+/g, ' ').toLowerCase();

/**
 * How the name searches rank names, in their cursors' fingerprints: a cursor of a release that
 * ranked them otherwise (as stored, before migration 040) is refused, where going on from its
 * position among the new scores would skip names ("Città" now scores 1 for "citta", ahead of the
 * old cursor's row).
 */
export const NAME_RANKING = 'folded';

export function criteriaFingerprint(criteria: unknown): string {
  return createHash('sha256').update(JSON.stringify(criteria)).digest('base64url').slice(0, 12);
}

export function encodeCursor(position: CursorPosition, fingerprint: string): string {
  return Buffer.from(JSON.stringify({
    v: 1, f: fingerprint, s: position.score, n: position.name, i: position.id,
    ...(position.closeness === undefined ? {} : { c: position.closeness }), ...(position.truncated ? { t: 1 } : {}),
  })).toString('base64url');
}

/**
 * Throws invalid_params (path `cursor`) for a cursor that is malformed or from another search.
 * A cursor is the caller's input: every field is checked to be what the query binds it as (a
 * numeric score, a name Postgres can hold, a company id that fits a bigint, or none where the
 * search has no id), or Postgres would refuse the query and the caller would see a store failure.
 */
export function decodeCursor(cursor: string, fingerprint: string, options: { companyId: boolean }): CursorPosition {
  let parsed: unknown;
  try {
    const bytes = Buffer.from(cursor, 'base64url');
    // Node's decoder skips what is not base64url and a dangling last character, so a cursor
    // with a character added (or one of its last bits changed) can decode to the same bytes:
    // only the text encodeCursor wrote is ours.
    if (bytes.toString('base64url') !== cursor) throw notOurs();
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw notOurs();
  }
  const c = parsed as { v?: unknown; f?: unknown; s?: unknown; n?: unknown; i?: unknown; c?: unknown; t?: unknown } | null;
  if (c === null || typeof c !== 'object' || c.v !== 1 || typeof c.f !== 'string') {
    throw notOurs();
  }
  // Before the fields' checks: a cursor of the other search tool (whose id field differs) is
  // one this service returned, and telling its holder to pass it "exactly as received" would
  // only have it sent again.
  if (c.f !== fingerprint) {
    throw invalidCursor(
      'The cursor belongs to another search: repeat the same search, query and filters with it, or drop it to start over.',
      'made by a search with other criteria, by the other search tool, or before the service changed how it ranks names',
    );
  }
  if (
    typeof c.s !== 'string' || !numeric.test(c.s)
    || typeof c.n !== 'string' || holdsNul(c.n)
    || typeof c.i !== 'string' || !(options.companyId ? /^\d{1,18}$/ : /^$/).test(c.i)
    || (c.c !== undefined && (typeof c.c !== 'string' || !numeric.test(c.c)))
    || (c.t !== undefined && c.t !== 1)
  ) {
    throw notOurs();
  }
  return { score: c.s, name: c.n, id: c.i, ...(typeof c.c === 'string' ? { closeness: c.c } : {}), ...(c.t === 1 ? { truncated: true } : {}) };
}

// The message says what to do; the detail, which a tool result's text prints after it, what is
// wrong with the cursor (as an argument's detail does), not the same sentence again.
function invalidCursor(message: string, detail: string): AppError {
  return new AppError('invalid_params', message, { details: [{ path: 'cursor', message: detail }] });
}

// A number as Postgres prints a numeric, which the query binds a score as.
const numeric = /^-?\d{1,20}(?:\.\d{1,20})?$/;

const notOurs = () => invalidCursor('The cursor is not one this service returned: pass nextCursor exactly as received.', 'malformed or altered');
