// A whole number as a person types it into a form: digits, and a minus sign where the field
// takes negatives; nothing is guessed (see dashboard/routes/operator-routes.ts on separators).
// Each refusal names what was wrong, so a page can say it in its own language
// (dashboard/views/invalid-input.ts): a separator and a plus sign are different mistakes.

/** Not digits: a separator ("1.000", "7,5"), a decimal, a letter, or past what a number holds. */
export const WHOLE_NUMBER = 'a whole number';
/** Digits after a plus sign ("+500"): the number without its sign is what is meant. */
export const NO_PLUS_SIGN = 'a whole number without a + sign';

/** Why `typed` (already trimmed) is not a whole number in digits, or null when it is one. */
export function wholeNumberRefusal(typed: string): typeof WHOLE_NUMBER | typeof NO_PLUS_SIGN | null {
  if (/^-?\d+$/.test(typed)) return Number.isSafeInteger(Number(typed)) ? null : WHOLE_NUMBER;
  return /^\+\d+$/.test(typed) ? NO_PLUS_SIGN : WHOLE_NUMBER;
}
