// Sample partite IVA: 7 digits of progressive number, 3 digits of the issuing office (the ISTAT
// province code), then the check digit (core/companies/italian-identifiers.ts).

import { partitaIvaCheckDigit } from '../companies/italian-identifiers.js';

/** The largest progressive number: it fills the seven digits before the office code. */
export const MAX_PROGRESSIVE = 9_999_999;

/** progressive: 1..MAX_PROGRESSIVE; officeCode: 1..999 (ISTAT province code). */
export function makePartitaIva(progressive: number, officeCode: number): string {
  if (!Number.isInteger(progressive) || progressive < 1 || progressive > MAX_PROGRESSIVE) throw new Error(`progressive out of range: ${progressive}`);
  if (!Number.isInteger(officeCode) || officeCode < 1 || officeCode > 999) throw new Error(`office code out of range: ${officeCode}`);
  const body = String(progressive).padStart(7, '0') + String(officeCode).padStart(3, '0');
  return body + String(partitaIvaCheckDigit(body));
}
