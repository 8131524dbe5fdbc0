import type { Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import { apiKeyState, createApiKey, getApiKey, revokeApiKey, type ApiKeyRecord, type CreatedApiKey } from '../auth/index.js';

export interface RotatedApiKey {
  created: CreatedApiKey;
  /** The old key, now expiring at the end of the grace period (or revoked when it is 0). */
  previous: ApiKeyRecord;
}

/** Grace periods offered for a rotation: the old key keeps working this long. */
export const rotationGraceSeconds = [0, 3_600, 86_400, 7 * 86_400] as const;

/**
 * A new key with the same name, mode and expiry, and the old one set to expire after
 * `graceSeconds` (0: revoked now), so clients can switch over without an outage. Setting
 * `expires_at` fires the api_key_changed notification, so every cache learns the new expiry at
 * once; an expiry already sooner than the grace period is kept.
 *
 * A key is rotated at most once: a key that already has a successor (even one still in its grace
 * period, so still "active") or that is revoked or expired is refused with invalid_params.
 */
export async function rotateApiKey(db: Db, input: { keyId: string; organizationId: string; graceSeconds: number; by: string; now?: Date }): Promise<RotatedApiKey> {
  const now = input.now ?? new Date();
  if (!Number.isInteger(input.graceSeconds) || input.graceSeconds < 0) throw new AppError('invalid_params', 'The grace period must be zero or more seconds.');
  return db.transaction(async (trx) => {
    // The row lock makes parallel rotations of one key (a double click) queue here. Each one
    // after the first reads the key, and looks for a successor, only once the first has
    // committed (read committed: every statement sees the latest commits), so it is refused.
    await trx('api_keys').where({ id: input.keyId }).forUpdate().select('id');
    const old = await getApiKey(trx, input.keyId);
    if (!old || old.organizationId !== input.organizationId) throw new AppError('not_found', 'No such key.');
    const successor = await trx('api_keys').where({ rotated_from: old.id }).first('id');
    if (successor) throw new AppError('invalid_params', 'This key has already been rotated: rotate its replacement instead.');
    if (apiKeyState(old, now) !== 'active') throw new AppError('invalid_params', 'Only an active key can be rotated.');
    // The replacement keeps the expiry the old key was created with, read before the grace
    // period below shortens it: rotating must not turn a dated key into one that never expires.
    const created = await createApiKey(trx, { organizationId: old.organizationId, name: old.name, kind: old.kind, mode: old.mode, createdBy: input.by, expiresAt: old.expiresAt });
    await trx('api_keys').where({ id: created.record.id }).update({ rotated_from: old.id });
    let previous: ApiKeyRecord;
    if (input.graceSeconds === 0) {
      previous = (await revokeApiKey(trx, old.id, input.by)).key;
    } else {
      const graceEnd = new Date(now.getTime() + input.graceSeconds * 1000);
      const expiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd;
      await trx('api_keys').where({ id: old.id }).update({ expires_at: expiresAt });
      previous = { ...old, expiresAt };
    }
    return { created, previous };
  });
}
