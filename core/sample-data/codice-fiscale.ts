// Codice fiscale of a natural person (DM 23/12/1976): 3 letters of surname, 3 of name, birth
// year, month letter, day (+40 for women), Belfiore code of the birthplace, then the check
// character (core/companies/italian-identifiers.ts).
// Omocodia (two people with the same 15 characters) is resolved by the Agenzia delle Entrate by
// replacing digits with letters from the right; the generator uses it the same way.

import { codiceFiscaleCheckChar } from '../companies/italian-identifiers.js';

const MONTH_LETTERS = 'ABCDEHLMPRST';
const OMOCODIA_LETTERS = 'LMNPQRSTUV';
// Positions (0-based) of the 7 digits, replaced right to left under omocodia.
const OMOCODIA_POSITIONS = [14, 13, 12, 10, 9, 7, 6];

const letters = (s: string) => s.normalize('NFD').replace(/[^A-Za-z]/g, '').toUpperCase();
const consonantsOf = (s: string) => s.replace(/[AEIOU]/g, '');
const vowelsOf = (s: string) => s.replace(/[^AEIOU]/g, '');

function surnameCode(surname: string): string {
  const s = letters(surname);
  return (consonantsOf(s) + vowelsOf(s) + 'XXX').slice(0, 3);
}

function nameCode(name: string): string {
  const s = letters(name);
  const consonants = consonantsOf(s);
  // With four or more consonants the name takes the 1st, 3rd and 4th.
  if (consonants.length >= 4) return consonants[0]! + consonants[2]! + consonants[3]!;
  return (consonants + vowelsOf(s) + 'XXX').slice(0, 3);
}

export interface CodiceFiscalePerson {
  surname: string;
  name: string;
  sex: 'M' | 'F';
  birthYear: number;
  birthMonth: number; // 1..12
  birthDay: number; // 1..31
  /** Belfiore (codice catastale) of the birthplace, e.g. F205 for Milano. */
  belfiore: string;
}

/** omocodia: how many digits (from the right) to replace with letters, 0..7. */
export function makeCodiceFiscale(person: CodiceFiscalePerson, omocodia = 0): string {
  const day = person.birthDay + (person.sex === 'F' ? 40 : 0);
  const chars = (
    surnameCode(person.surname) +
    nameCode(person.name) +
    String(person.birthYear % 100).padStart(2, '0') +
    MONTH_LETTERS[person.birthMonth - 1] +
    String(day).padStart(2, '0') +
    person.belfiore.toUpperCase()
  ).split('');
  for (let i = 0; i < Math.min(omocodia, OMOCODIA_POSITIONS.length); i++) {
    const pos = OMOCODIA_POSITIONS[i] as number;
    chars[pos] = OMOCODIA_LETTERS[Number(chars[pos])] as string;
  }
  const body = chars.join('');
  return body + codiceFiscaleCheckChar(body);
}
