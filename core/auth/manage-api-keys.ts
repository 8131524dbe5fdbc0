import { z } from 'zod';
import { singleLine, type Db } from '../db/index.js';
import { AppError, parseInput } from '../errors/index.js';
import { newId } from '../ids/index.js';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key-format.js';
import { apiKeyColumns, toApiKeyRecord, type ApiKeyRecord, type ApiKeyRow } from './api-key-record.js';

// Key management used by the operator CLI now and the dashboard later: one input schema each,
// so both validate the same way.
export const createApiKeyInputSchema = z.object({
  organizationId: z.string().min(1),
  name: singleLine(z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters')),
  kind: z.enum(['organization', 'personal']).default('organization'),
  mode: z.enum(['live', 'test']).default('live'),
  expiresAt: z.date().nullable().default(null),
  createdBy: z.string().min(1).nullable().default(null),
  /** The person a personal key belongs to. */
  userId: z.string().min(1).nullable().default(null),
});
export type CreateApiKeyInput = z.input<typeof createApiKeyInputSchema>;

export interface CreatedApiKey {
  /** The full key: shown once, never stored. */
  key: string;
  record: ApiKeyRecord;
}

export async function createApiKey(db: Db, input: CreateApiKeyInput): Promise<CreatedApiKey> {
  const parsed = parseInput(createApiKeyInputSchema, input);
  if (parsed.expiresAt && parsed.expiresAt.getTime() <= Date.now()) {
    throw new AppError('invalid_params', 'The expiry must be in the future.', { details: [{ path: 'body.expiresAt', message: 'must be in the future' }] });
  }
  const organization = await db('organizations').where({ id: parsed.organizationId }).first('id');
  if (!organization) throw new AppError('not_found', `No organization with id ${parsed.organizationId}.`);
  const key = generateApiKey(parsed.mode);
  const [row] = (await db('api_keys')
    .insert({
      id: newId('key'),
      organization_id: parsed.organizationId,
      name: parsed.name,
      kind: parsed.kind,
      mode: parsed.mode,
      user_id: parsed.userId,
      hash: hashApiKey(key),
      prefix: displayPrefix(key),
      created_by: parsed.createdBy,
      expires_at: parsed.expiresAt,
    })
    .returning([...apiKeyColumns])) as ApiKeyRow[];
  return { key, record: toApiKeyRecord(row!) };
}

export async function listApiKeys(db: Db, organizationId: string): Promise<ApiKeyRecord[]> {
  const rows = (await db('api_keys')
    .where({ organization_id: organizationId })
    .orderBy([{ column: 'created_at', order: 'asc' }, { column: 'id', order: 'asc' }])
    .select([...apiKeyColumns])) as ApiKeyRow[];
  return rows.map(toApiKeyRecord);
}

export async function getApiKey(db: Db, keyId: string): Promise<ApiKeyRecord | undefined> {
  const row = (await db('api_keys').where({ id: keyId }).first([...apiKeyColumns])) as ApiKeyRow | undefined;
  return row ? toApiKeyRecord(row) : undefined;
}

/**
 * Idempotent: revoking a revoked key keeps the first revocation. The UPDATE fires the
 * api_key_changed notification, which evicts the key from every process's cache.
 */
/** Revokes a key; `revoked` is false when it already was (nothing changed: nothing to audit). */
export async function revokeApiKey(db: Db, keyId: string, by: string | null): Promise<{ key: ApiKeyRecord; revoked: boolean }> {
  const [row] = (await db('api_keys')
    .where({ id: keyId })
    .whereNull('revoked_at')
    .update({ revoked_at: db.fn.now(), revoked_by: by })
    .returning([...apiKeyColumns])) as ApiKeyRow[];
  if (row) return { key: toApiKeyRecord(row), revoked: true };
  const existing = await getApiKey(db, keyId);
  if (!existing) throw new AppError('not_found', `No API key with id ${keyId}.`);
  return { key: existing, revoked: false };
}
