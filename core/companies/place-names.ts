import { loadPlaceNames } from '../sample-data/reference-data.js';

// ISTAT's comuni and provinces (data/reference/comuni.json), read once, when a search first
// needs them, for the municipality and province filters (municipality-names.ts,
// province-names.ts). Without the file (an image built without data/reference) there is no list:
// names are then searched as given and none is refused.

/**
 * A place's name folded for comparing with the list: case, accents, a vowel's apostrophe
 * ("Cantu'") as in municipality-match.ts, and here also an elision's apostrophe, hyphens, dots and
 * runs of spaces as one space ("Sant'Elpidio" is "sant elpidio", "St. Ulrich" "st ulrich"), and a
 * province's code after the name, as addresses write it ("Milano (MI)").
 */
export const foldPlaceName = (name: string) => name.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/\u2019/g, "'")
  .replace(/\s*\([a-z]{2}\)\s*$/, '').replace(/([aeiou])'(?=\s|$)/g, '$1').replace(/['.\-]/g, ' ').replace(/\s+/g, ' ').trim();

let read: ReturnType<typeof loadPlaceNames> | null | undefined;

/** The list, or null when it cannot be read. */
export function placeNames(): ReturnType<typeof loadPlaceNames> | null {
  if (read === undefined) {
    try {
      read = loadPlaceNames();
    } catch {
      read = null;
    }
  }
  return read;
}
