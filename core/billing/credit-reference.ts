import { CONTROL_MESSAGE, holdsControlCharacter } from '../db/index.js';
import { AppError } from '../errors/index.js';

export type CreditChangeKind = 'grant' | 'top_up' | 'adjustment';

/** The prefix of a credit change's ledger event id, by kind. */
export const CREDIT_ID_PREFIX: Record<CreditChangeKind, string> = { grant: 'grt', top_up: 'top', adjustment: 'adj' };

/** changeCredits' refusal of a reference already on the ledger for another amount, under the field. */
export const REFERENCE_USED = 'already used for a different change';

/** A reference's length at most, trimmed: the CLI's `--reference` and the operator's credits form alike. */
export const MAX_REFERENCE = 100;

/**
 * The event id of a credit change made under the caller's own reference (an invoice or ticket
 * number): the same reference for the same organization and kind names the same ledger row, so
 * the change run again (a retried script, a command recalled from the shell's history) changes
 * nothing. `creditReference` reads the reference back for the ledger page and export, and
 * the report's entries.
 */
export function referencedEventId(kind: CreditChangeKind, organizationId: string, reference: string): string {
  const ref = reference.trim();
  const problem = ref === '' ? 'must not be empty' : ref.length > MAX_REFERENCE ? `must be at most ${MAX_REFERENCE} characters` : holdsControlCharacter(ref) ? CONTROL_MESSAGE : null;
  if (problem) throw new AppError('invalid_params', `The reference ${problem}.`, { details: [{ path: 'reference', message: problem }] });
  return `${CREDIT_ID_PREFIX[kind]}_ref_${organizationId}_${ref}`;
}

/**
 * The reference a credit change was made under (`--reference "FT 2026/117"`), or null: kept
 * only in the row's event id, which finance should not have to pick apart. Ids made without a
 * reference (`top_` + random base62) hold no `_ref_`, so they are never read as one.
 */
export function creditReference(row: { entryType: string; organizationId: string; eventId: string }): string | null {
  if (!Object.hasOwn(CREDIT_ID_PREFIX, row.entryType)) return null;
  const prefix = `${CREDIT_ID_PREFIX[row.entryType as CreditChangeKind]}_ref_${row.organizationId}_`;
  return row.eventId.startsWith(prefix) && row.eventId.length > prefix.length ? row.eventId.slice(prefix.length) : null;
}
