import { likeEscape } from '../db/index.js';

// Italian surnames begin with an elision (D'Amico, Dell'Orto) or a particle (De Rosa, Di Maio, Lo
// Russo), and registries and filings write the same surname with the apostrophe, with a space for
// it, or joined: D'AMICO, D AMICO, DAMICO; DE ROSA, DEROSA. The people search takes them for one
// name: the person's key joins a particle to the word after it (particlesJoinedSql, once the
// apostrophes are gone), and a surname alone is also looked up in its other forms
// (surnameVariantPatterns).

/** Elided forms, each written before a vowel: D'Amico, Dell'Orto, Dall'Ara, Degl'Innocenti, Sant'Elia. */
const ELISIONS = ['d', 'dell', 'dall', 'degl', 'nell', 'sant'];
/** Particles written as a word of their own: De Rosa, Di Maio, Del Piero, Della Valle, Lo Russo, La Rosa, San Marco. */
const PARTICLES = ['de', 'di', 'del', 'della', 'dello', 'dei', 'degli', 'da', 'dal', 'dalla', 'lo', 'la', 'san', 'santa'];
// Longest first: "dellorto" is dell + orto, not d + ellorto.
const alternatives = (words: string[]) => [...new Set(words)].sort((a, b) => b.length - a.length).join('|');

/**
 * SQL for `expression` (lower case, without apostrophes) with each particle or elided form joined
 * to the word after it, and a hyphen taken for a space ("anna-lisa" is "anna lisa"; "de rosa" and
 * "d amico" are "derosa" and "damico"). Tabs and line breaks are spaces too.
 */
export function particlesJoinedSql(expression: string): string {
  // (The word after it is matched, not looked ahead to: a lookahead's question mark would be a
  // binding to knex.)
  return `regexp_replace(translate(${expression}, E'-\\t\\n\\r', '    '), '(^| )(${alternatives([...ELISIONS, ...PARTICLES])}) +([^ ])', '\\1\\2\\3', 'g')`;
}

const VOWEL = '[aeiouàèéìòù]';
const ELIDED = new RegExp(`^(${alternatives(ELISIONS)})(${VOWEL}\\p{L}{2,})$`, 'iu');
const JOINED_PARTICLE = new RegExp(`^(${alternatives(PARTICLES)})(\\p{L}{3,})$`, 'iu');
const SEPARATE = new RegExp(`^(${alternatives([...ELISIONS, ...PARTICLES])})['\u2019 ](\\p{L}{3,})$`, 'iu');

/**
 * ILIKE patterns for the other forms of a surname written alone: "Damico" also as "d_amico"
 * (the apostrophe, a space or a hyphen), "Derosa" as "de_rosa", and "De Rosa" or "D'Amico" joined
 * ("derosa", "damico"). None for a name of more words, or one with no such beginning: a full name
 * finds the other forms by similarity ("mario damico" has 0.77 to "D'AMICO MARIO", over the 0.6
 * a match needs; "damico" alone 0.57, "de rosa" 0.5 to "DEROSA"), and each form is a scan of its
 * own, so "Daniele Rossi" would pay for a "D'aniele" nobody has.
 */
export function surnameVariantPatterns(text: string): string[] {
  const separate = SEPARATE.exec(text);
  if (separate) return [`%${likeEscape(separate[1]! + separate[2]!)}%`];
  const patterns: string[] = [];
  for (const form of [ELIDED.exec(text), JOINED_PARTICLE.exec(text)]) {
    if (form) patterns.push(`%${likeEscape(form[1]!)}_${likeEscape(form[2]!)}%`);
  }
  return patterns;
}
