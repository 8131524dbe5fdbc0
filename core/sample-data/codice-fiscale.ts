// Codice fiscale of a natural person (DM 23/12/1976): 3 letters of surname, 3 of name, birth
// year, month letter, day (+40 for women), Belfiore code of the birthplace, check character.
// Omocodia (two people with the same 15 characters) is resolved by the Agenzia delle Entrate by
// replacing digits with letters from the right; the generator uses it the same way.

const MONTH_LETTERS = 'ABCDEHLMPRST';
const OMOCODIA_LETTERS = 'LMNPQRSTUV';
// Positions (0-based) of the 7 digits, replaced right to left under omocodia.
const OMOCODIA_POSITIONS = [14, 13, 12, 10, 9, 7, 6];
// Values of characters in odd positions (1st, 3rd, ...): 0-9 then A-Z.
const ODD_VALUES: Record<string, number> = {};
const oddTable = [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8, 12, 14, 16, 10, 22, 25, 24, 23];
for (let i = 0; i < 10; i++) ODD_VALUES[String(i)] = oddTable[i] as number;
for (let i = 0; i < 26; i++) ODD_VALUES[String.fromCharCode(65 + i)] = oddTable[i] as number;

export const codiceFiscalePattern = /^[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z]$/;

export function codiceFiscaleCheckChar(first15: string): string {
  if (!/^[A-Z0-9]{15}$/.test(first15)) throw new Error(`codice fiscale body must be 15 characters A-Z0-9, got "${first15}"`);
  let sum = 0;
  for (let i = 0; i < 15; i++) {
    const ch = first15[i] as string;
    if (i % 2 === 0) sum += ODD_VALUES[ch] as number;
    else sum += ch >= 'A' ? ch.charCodeAt(0) - 65 : ch.charCodeAt(0) - 48;
  }
  return String.fromCharCode(65 + (sum % 26));
}

export function isValidCodiceFiscale(code: string): boolean {
  return codiceFiscalePattern.test(code) && codiceFiscaleCheckChar(code.slice(0, 15)) === code[15];
}

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
