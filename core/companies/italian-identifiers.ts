// The check characters of Italian identifiers (DM 23/12/1976): the partita IVA's check digit
// and the codice fiscale's check character. The company store and the API use them to tell a
// mistyped code from a company not on file; the sample data generator uses them to make codes
// that pass.

// Partita IVA: 7 digits of progressive number, 3 of the issuing office, 1 check digit computed
// with a Luhn-style rule.
/** The check digit for the first 10 digits. */
export function partitaIvaCheckDigit(first10: string): number {
  if (!/^\d{10}$/.test(first10)) throw new Error(`partita IVA body must be 10 digits, got "${first10}"`);
  let sum = 0;
  for (let i = 0; i < 10; i++) {
    const digit = first10.charCodeAt(i) - 48;
    if (i % 2 === 0) sum += digit;
    else {
      const doubled = digit * 2;
      sum += doubled > 9 ? doubled - 9 : doubled;
    }
  }
  return (10 - (sum % 10)) % 10;
}

export function isValidPartitaIva(code: string): boolean {
  if (!/^\d{11}$/.test(code)) return false;
  return partitaIvaCheckDigit(code.slice(0, 10)) === code.charCodeAt(10) - 48;
}

// Codice fiscale of a natural person: 15 characters, then a check character computed over them.
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
