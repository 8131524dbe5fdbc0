// Partita IVA: 7 digits of progressive number, 3 digits of the issuing office (the ISTAT
// province code), 1 check digit computed with the Luhn-style rule of DM 23/12/1976.

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

/** The largest progressive number: it fills the seven digits before the office code. */
export const MAX_PROGRESSIVE = 9_999_999;

/** progressive: 1..MAX_PROGRESSIVE; officeCode: 1..999 (ISTAT province code). */
export function makePartitaIva(progressive: number, officeCode: number): string {
  if (!Number.isInteger(progressive) || progressive < 1 || progressive > MAX_PROGRESSIVE) throw new Error(`progressive out of range: ${progressive}`);
  if (!Number.isInteger(officeCode) || officeCode < 1 || officeCode > 999) throw new Error(`office code out of range: ${officeCode}`);
  const body = String(progressive).padStart(7, '0') + String(officeCode).padStart(3, '0');
  return body + String(partitaIvaCheckDigit(body));
}
