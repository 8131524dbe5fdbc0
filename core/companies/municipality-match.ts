import type { Knex } from 'knex';
import { foldAccentsSql } from './fold-text.js';

// The search's municipality filter: the comune's whole name, in any case and with or without its
// accents ("Cantu" and "CANTÙ" find Cantù, "Forli" Forlì), as callers often type names in ASCII.
// A vowel that ends a word followed by an apostrophe, ASCII or typographic, is that vowel
// accented ("Cantu'", "CITTA' DI CASTELLO", "Forli’"), as registries and keyboards without
// accented capitals write it; an apostrophe before a letter is an elision and stays ("L'Aquila",
// "Sant'Angelo", either apostrophe). Both sides are folded alike, so a name stored so matches too,
// and an elision that ends a word ("Ca' d'Andrea", "Sant'Agata de' Goti") still finds itself.
// Otherwise still an exact-name match: a misspelt or partial name finds nothing.

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
