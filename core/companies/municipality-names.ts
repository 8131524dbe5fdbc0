import { foldPlaceName as fold, placeNames } from './place-names.js';
import { editDistance } from '../text/index.js';

// The municipality filter matches a comune's whole name (municipality-match.ts), and agents write
// names as people say them: in English ("Milan"), short ("Reggio Emilia" for Reggio nell'Emilia),
// with a space for the apostrophe ("Porto Sant Elpidio"). Each found nothing, and an empty answer
// read as "no such company there". Such a name is read as the comune it stands for when no company
// on file has it as written; one that is no comune at all is refused with the nearest names, by
// ISTAT's list of the 7,904 comuni (place-names.ts).

// Names of comuni the list does not hold, folded as `fold` folds them: English ones, the short
// forms people use, and the German and French official names of bilingual comuni (the list holds
// the Italian name alone: Bolzano, not Bolzano/Bozen), the larger ones.
const OTHER_NAMES: Record<string, string> = {
  milan: 'Milano', rome: 'Roma', turin: 'Torino', naples: 'Napoli', florence: 'Firenze', venice: 'Venezia',
  genoa: 'Genova', padua: 'Padova', mantua: 'Mantova', syracuse: 'Siracusa',
  'reggio emilia': "Reggio nell'Emilia", 'reggio calabria': 'Reggio di Calabria',
  bozen: 'Bolzano', meran: 'Merano', brixen: 'Bressanone', bruneck: 'Brunico', sterzing: 'Vipiteno', leifers: 'Laives',
  eppan: 'Appiano sulla strada del vino', 'eppan an der weinstrasse': 'Appiano sulla strada del vino',
  kaltern: 'Caldaro sulla strada del vino', 'kaltern an der weinstrasse': 'Caldaro sulla strada del vino',
  klausen: 'Chiusa', 'st ulrich': 'Ortisei', 'sankt ulrich': 'Ortisei', kastelruth: 'Castelrotto', ritten: 'Renon',
  toblach: 'Dobbiaco', innichen: 'San Candido', schlanders: 'Silandro', sexten: 'Sesto',
  aoste: 'Aosta',
};

let comuni: { loaded: boolean; byFold: Map<string, string>; names: { name: string; folded: string; words: string[] }[] } | undefined;
function list() {
  if (!comuni) {
    const read = placeNames();
    const names = [...new Set(read?.comuni ?? [])].map((name) => ({ name, folded: fold(name), words: fold(name).split(' ') }));
    comuni = { loaded: read !== null, byFold: new Map(names.map((n) => [n.folded, n.name])), names };
  }
  return comuni;
}

/** The comune a name stands for, when written otherwise than ISTAT writes it; undefined when it is written so, or stands for none. */
export function comuneWrittenOtherwise(name: string): string | undefined {
  const folded = fold(name);
  const official = OTHER_NAMES[folded] ?? list().byFold.get(folded);
  return official !== undefined && official !== name.trim() ? official : undefined;
}

/** Whether the name is a comune's, written as ISTAT writes it or otherwise (comuneWrittenOtherwise). */
export function isComune(name: string): boolean {
  const folded = fold(name);
  return !list().loaded || list().byFold.has(folded) || Object.hasOwn(OTHER_NAMES, folded);
}

/**
 * Up to three comuni a name that is none may mean, nearest first: those holding each of its words
 * as a word or a word's start, a letter off at most ("Reggio Emila": Reggio nell'Emilia), the
 * shortest first, then those within a quarter of its length in edits ("Milno": Milano).
 */
export function nearestComuni(name: string): string[] {
  const folded = fold(name);
  const words = folded.split(' ').filter((w) => w.length > 0);
  if (words.length === 0) return [];
  // Each word as a word's start; else, for four letters or more, a letter off, whole or as a
  // word's start ("Emila"): after those that hold every word as typed.
  const prefixed = (w: string) => (cw: string) => cw.startsWith(w);
  const nearly = (w: string) => (cw: string) => w.length >= 4 && (editDistance(w, cw, 1) <= 1 || editDistance(w, cw.slice(0, w.length), 1) <= 1);
  const holding = list().names.filter((c) => words.every((w) => c.words.some(prefixed(w))));
  const holdingNearly = list().names.filter((c) => words.every((w) => c.words.some((cw) => prefixed(w)(cw) || nearly(w)(cw))));
  const limit = Math.max(1, Math.floor(folded.length / 4));
  const near = list().names
    .map((c) => ({ c, distance: editDistance(folded, c.folded, limit) }))
    .filter((x) => x.distance <= limit)
    .sort((a, b) => a.distance - b.distance || a.c.name.localeCompare(b.c.name))
    .map((x) => x.c);
  const byLength = (a: { name: string }, b: { name: string }) => a.name.length - b.name.length || a.name.localeCompare(b.name);
  return [...new Set([...holding.sort(byLength), ...near, ...holdingNearly.sort(byLength)].map((c) => c.name))].slice(0, 3);
}
