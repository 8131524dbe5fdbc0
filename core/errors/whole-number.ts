// A whole number as a person types it into a form: digits, and a minus sign where the field
// takes negatives; nothing is guessed (see dashboard/routes/operator-routes.ts on separators).
// Each refusal names what was wrong, so a page can say it in its own language
// (dashboard/views/invalid-input.ts): a separator, a plus sign and a size are different mistakes.

/** Not digits: a separator ("1.000", "7,5"), a decimal, a letter. */
export const WHOLE_NUMBER = 'a whole number';
/** Digits after a plus sign ("+500"): the number without its sign is what is meant. */
export const NO_PLUS_SIGN = 'a whole number without a + sign';
/** The largest whole number read exactly (a JavaScript number); past it, digits are refused by size. */
export const MAX_WHOLE_NUMBER = Number.MAX_SAFE_INTEGER;

/** A number in digits, too large (or too far below zero) for the field: said as its bound, as "at most 100" is. */
export type SizeRefusal = `at most ${number}` | `at least -${number}`;

export const isSizeRefusal = (refusal: string | null): refusal is SizeRefusal => refusal !== null && /^at (most|least) -?\d+$/.test(refusal);

/**
 * Why `typed` (already trimmed) is not a whole number in digits, or null when it is one. Digits
 * past `max` (at most MAX_WHOLE_NUMBER, the default) either way are refused by size: 40 ones are
 * digits only, and "no separators" would tell the person nothing they could change.
 */
export function wholeNumberRefusal(typed: string, max: number = MAX_WHOLE_NUMBER): typeof WHOLE_NUMBER | typeof NO_PLUS_SIGN | SizeRefusal | null {
  if (/^-?\d+$/.test(typed)) {
    const n = BigInt(typed);
    const bound = BigInt(Math.min(max, MAX_WHOLE_NUMBER));
    if (n > bound) return `at most ${bound}` as SizeRefusal;
    if (n < -BigInt(MAX_WHOLE_NUMBER)) return `at least -${MAX_WHOLE_NUMBER}` as SizeRefusal;
    return null;
  }
  return /^\+\d+$/.test(typed) ? NO_PLUS_SIGN : WHOLE_NUMBER;
}
