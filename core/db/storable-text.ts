import { z } from 'zod';

// Postgres cannot hold U+0000 in text, varchar or jsonb: the server refuses the whole statement
// (SQLSTATE 22021 for a parameter, 22P05 for a JSON escape). Input that may carry one (a path
// segment, a tool argument, a form field, a message read off the bus) is checked before it gets
// there, so its sender hears which field is wrong instead of "the store failed".
const NUL = '\u0000';

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

export const holdsNul = (text: string): boolean => text.includes(NUL);

/** A string schema that also refuses NUL, with a message that names it. */
export const withoutNul = <T extends z.ZodString>(schema: T): T => schema.refine((text) => !holdsNul(text), NUL_MESSAGE);

// Names and reasons are printed on one line: in the CLI's tables, on an operator's terminal (an
// ESC starts a terminal control sequence), in CSV rows and on the dashboard. C0 controls (tab,
// line breaks, ESC …), DEL and the C1 controls.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export const CONTROL_MESSAGE = 'must not contain line breaks, tabs or other control characters';

export const holdsControlCharacter = (text: string): boolean => CONTROL.test(text);

/** A string schema for one line of text: it refuses control characters, NUL included. */
export const singleLine = <T extends z.ZodString>(schema: T): T => schema.refine((text) => !holdsControlCharacter(text), CONTROL_MESSAGE);

/** Text kept for people to read (a dead letter's payload and reason): each NUL is stored as the
 * six characters \u0000, which JSON reads back as the same NUL. */
export const escapeNul = (text: string): string => (holdsNul(text) ? text.replaceAll(NUL, '\\u0000') : text);

/** Where NUL sits in a parsed JSON value: each string (or object key) holding one, as a path,
 * at most `limit` of them in document order. */
export function nulPaths(value: unknown, limit = 5): PropertyKey[][] {
  const found: PropertyKey[][] = [];
  const walk = (v: unknown, path: PropertyKey[]) => {
    if (found.length >= limit) return;
    if (typeof v === 'string') {
      if (holdsNul(v)) found.push(path);
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, [...path, i]));
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        if (holdsNul(key) && found.length < limit) found.push([...path, escapeNul(key)]);
        walk(item, [...path, key]);
      }
    }
  };
  walk(value, []);
  return found;
}
