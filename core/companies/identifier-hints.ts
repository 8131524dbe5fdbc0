// Why an identifier a caller typed cannot be a company's, said so they fix the identifier
// instead of concluding we lack the company.
import { codiceFiscalePattern, isValidCodiceFiscale, isValidPartitaIva } from './italian-identifiers.js';

const TEN_DIGITS = /^\d{10}$/;
const IT_VAT_NUMBER = /^IT(\d{11})$/i;

/** A spreadsheet that read the code as a number dropped its leading zero. */
const lostZero = (digits: string) => `it has 10 digits: a leading zero may have been lost (0${digits})`;

/**
 * What is wrong with a value the report endpoints' `fiscalCode` refused (not 11 digits, not 16
 * characters), where a common slip explains it: spaces, a lost leading zero, or the IT prefix of
 * a VAT number as invoices write it (the spec's pattern refuses it there; the profile takes it).
 */
function fiscalCodeShapeHint(value: string): string | undefined {
  const spaces = spacesHint(value, (compact) => /^\d{11}$/.test(compact) || isValidCodiceFiscale(compact.toUpperCase()), fiscalCodeShapeHint);
  if (spaces) return spaces;
  if (TEN_DIGITS.test(value)) return lostZero(value);
  const vat = IT_VAT_NUMBER.exec(value);
  if (vat) return `drop the IT prefix: ${vat[1]}`;
  return undefined;
}

/** A fiscal code refused for its shape, with no slip to name. */
export const FISCAL_CODE_REFUSAL = 'must be an 11-digit code or a 16-character codice fiscale';

/** Why a value is not a fiscal code, for every schema that takes one (the API's, the tools'). */
export function fiscalCodeRefusal(input: unknown): string {
  const hint = typeof input === 'string' ? fiscalCodeShapeHint(input) : undefined;
  return hint ? `${FISCAL_CODE_REFUSAL}; ${hint}` : FISCAL_CODE_REFUSAL;
}

/**
 * Why an identifier no company has cannot be a real one, for the not_found message; undefined
 * when it may well be real. Only said after the lookup found nothing: a company on file answers
 * whatever its code's check digit (imported data is not held to it).
 */
export function notFoundHint(identifier: string): string | undefined {
  const spaces = spacesHint(identifier, (compact) => /^(?:IT)?\d{11}$/i.test(compact) || isValidCodiceFiscale(compact.toUpperCase()), notFoundHint);
  if (spaces) return spaces;
  if (TEN_DIGITS.test(identifier)) return lostZero(identifier);
  const digits = IT_VAT_NUMBER.exec(identifier)?.[1] ?? identifier;
  if (/^\d{11}$/.test(digits) && !isValidPartitaIva(digits)) return 'its check digit does not match: it is mistyped, not a company we lack';
  if (codiceFiscalePattern.test(identifier) && !isValidCodiceFiscale(identifier)) return 'its check character does not match: it is mistyped, not a company we lack';
  return undefined;
}

/**
 * A code pasted with a space (before it, after it, or in it as "IT 01126670213"; in a URL %20):
 * the code without them when that is 11 digits or a person's codice fiscale whose check character
 * matches (its layout is not enough: "Villa Estense Srls" makes one without its spaces, the
 * omocodia letters standing for digits), or the slip that code then shows; else undefined.
 * Without it, " 01126670213" was refused as not 11 digits, which it plainly is.
 */
function spacesHint(value: string, isCodeShaped: (compact: string) => boolean, nextHint: (compact: string) => string | undefined): string | undefined {
  if (!/\s/.test(value)) return undefined;
  const compact = value.replace(/\s+/g, '');
  if (compact === '') return undefined;
  if (isCodeShaped(compact)) return `drop the spaces: ${compact}`;
  // A slip the code then shows only for digits (a lost zero, an IT prefix, a check digit): letters
  // that make a codice fiscale's layout are more likely a name's than a code's.
  const next = /^(?:IT)?\d+$/i.test(compact) ? nextHint(compact) : undefined;
  return next ? `drop the spaces; ${next}` : undefined;
}
