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
 * A new key with the same name and mode, and the old one set to expire after `graceSeconds`
 * (0: revoked now), so clients can switch over without an outage. Setting `expires_at` fires
 * the api_key_changed notification, so every cache learns the new expiry at once; an expiry
 * already sooner than the grace period is kept.
 */
export async function rotateApiKey(db: Db, input: { keyId: string; organizationId: string; graceSeconds: number; by: string; now?: Date }): Promise<RotatedApiKey> {
  const now = input.now ?? new Date();
  if (!Number.isInteger(input.graceSeconds) || input.graceSeconds < 0) throw new AppError('invalid_params', 'The grace period must be zero or more seconds.');
  return db.transaction(async (trx) => {
    const old = await getApiKey(trx, input.keyId);
    if (!old || old.organizationId !== input.organizationId) throw new AppError('not_found', 'No such key.');
    if (apiKeyState(old, now) !== 'active') throw new AppError('invalid_params', 'Only an active key can be rotated.');
    const created = await createApiKey(trx, { organizationId: old.organizationId, name: old.name, kind: old.kind, mode: old.mode, createdBy: input.by, expiresAt: null });
    await trx('api_keys').where({ id: created.record.id }).update({ rotated_from: old.id });
    let previous: ApiKeyRecord;
    if (input.graceSeconds === 0) {
      previous = await revokeApiKey(trx, old.id, input.by);
    } else {
      const graceEnd = new Date(now.getTime() + input.graceSeconds * 1000);
      const expiresAt = old.expiresAt && old.expiresAt < graceEnd ? old.expiresAt : graceEnd;
      await trx('api_keys').where({ id: old.id }).update({ expires_at: expiresAt });
      previous = { ...old, expiresAt };
    }
    return { created, previous };
  });
}
