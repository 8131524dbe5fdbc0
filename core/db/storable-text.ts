import { z } from 'zod';

// Postgres cannot hold U+0000 in text, varchar or jsonb: the server refuses the whole statement
// (SQLSTATE 22021 for a parameter, 22P05 for a JSON escape). Input that may carry one (a path
// segment, a tool argument, a form field, a message read off the bus) is checked before it gets
// there, so its sender hears which field is wrong instead of "the store failed".
const NUL = '\u0000';

export const NUL_MESSAGE = 'must not contain the NUL character (U+0000)';

export const holdsNul = (text: string): boolean => text.includes(NUL);

// Names and reasons are printed on one line: in the CLI's tables, on an operator's terminal (an
// ESC starts a terminal control sequence), in CSV rows and on the dashboard. C0 controls (tab,
// line breaks, ESC …), DEL and the C1 controls; and the invisible bidirectional embeddings,
// overrides and isolates (U+202A–U+202E, U+2066–U+2069), which reorder what follows them on the
// line: a key named "…\u202Eevil" made the finance pages show its prefix and id backwards.
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

export const CONTROL_MESSAGE = 'must not contain line breaks, tabs or other control characters';

export const holdsControlCharacter = (text: string): boolean => CONTROL.test(text);

/** A string schema for one line of text: it refuses control characters, NUL included. */
export const singleLine = <T extends z.ZodString>(schema: T): T => schema.refine((text) => !holdsControlCharacter(text), CONTROL_MESSAGE);

/** Text kept for people to read (a dead letter's payload and reason): each NUL is stored as the
 * six characters \u0000, which JSON reads back as the same NUL. */
export const escapeNul = (text: string): string => (holdsNul(text) ? text.replaceAll(NUL, '\\u0000') : text);

// A UTF-16 surrogate not in a pair: JSON can carry one as an escape ("\ud83d", an emoji cut
// in half), and JavaScript keeps it, but Postgres refuses it in jsonb (SQLSTATE 22P02, naming
// no field) and stores U+FFFD in its place in text. Without the u flag the pattern reads code
// units, as it must here.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/** The first surrogate of `text` that is not in a pair, as a JSON escape (`\ud83d`); null when there is none. */
export function loneSurrogateIn(text: string): string | null {
  const found = LONE_SURROGATE.exec(text);
  return found === null ? null : `\\u${found[0].charCodeAt(0).toString(16)}`;
}

export const loneSurrogateMessage = (escape: string): string =>
  `holds an unpaired UTF-16 surrogate (${escape}): the text was cut inside a character; fix or remove it`;

/** Text for a message: NUL and unpaired surrogates written as their JSON escapes. */
export const escapeUnstorable = (text: string): string =>
  escapeNul(text).replace(LONE_SURROGATES, (s) => `\\u${s.charCodeAt(0).toString(16)}`);

/** Why a text cannot be stored as it is, or null when it can. */
export function unstorableTextReason(text: string): string | null {
  if (holdsNul(text)) return NUL_MESSAGE;
  const surrogate = loneSurrogateIn(text);
  return surrogate === null ? null : loneSurrogateMessage(surrogate);
}

/** A string schema that refuses what the store cannot hold as written: NUL (Postgres refuses it)
 * and an unpaired surrogate (Postgres keeps U+FFFD in its place: the text would change silently). */
export const storable = <T extends z.ZodString>(schema: T): T =>
  schema.superRefine((text, ctx) => {
    const reason = unstorableTextReason(text);
    if (reason !== null) ctx.addIssue({ code: 'custom', message: reason });
  });

export interface UnstorableText {
  /** Where the text sits (object keys that are unstorable themselves escaped, as escapeUnstorable does). */
  path: PropertyKey[];
  reason: string;
}

/** Each string (or object key) of a parsed JSON value that the store cannot hold, at most `limit`, in document order. */
export const unstorableTexts = (value: unknown, limit = 5): UnstorableText[] => findTexts(value, unstorableTextReason, limit);

/** Where NUL sits in a parsed JSON value: each string (or object key) holding one, as a path,
 * at most `limit` of them in document order. */
export const nulPaths = (value: unknown, limit = 5): PropertyKey[][] =>
  findTexts(value, (text) => (holdsNul(text) ? NUL_MESSAGE : null), limit).map((found) => found.path);

function findTexts(value: unknown, reasonOf: (text: string) => string | null, limit: number): UnstorableText[] {
  const found: UnstorableText[] = [];
  const walk = (v: unknown, path: PropertyKey[]) => {
    if (found.length >= limit) return;
    if (typeof v === 'string') {
      const reason = reasonOf(v);
      if (reason !== null) found.push({ path, reason });
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, [...path, i]));
    } else if (v !== null && typeof v === 'object') {
      for (const [key, item] of Object.entries(v)) {
        const reason = reasonOf(key);
        const shown = reason === null ? key : escapeUnstorable(key);
        if (reason !== null && found.length < limit) found.push({ path: [...path, shown], reason });
        walk(item, [...path, shown]);
      }
    }
  };
  walk(value, []);
  return found;
}
