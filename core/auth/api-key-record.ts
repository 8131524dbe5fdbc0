import type { KeyKind, KeyMode } from './api-key-format.js';

/** What an operator or dashboard may see of a key: never the key or its hash. */
export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  kind: KeyKind;
  mode: KeyMode;
  prefix: string;
  createdAt: Date;
  createdBy: string | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  revokedBy: string | null;
  lastUsedAt: Date | null;
}

export const apiKeyColumns = [
  'id', 'organization_id', 'name', 'kind', 'mode', 'prefix', 'created_at', 'created_by',
  'expires_at', 'revoked_at', 'revoked_by', 'last_used_at',
] as const;

export interface ApiKeyRow {
  id: string;
  organization_id: string;
  name: string;
  kind: KeyKind;
  mode: KeyMode;
  prefix: string;
  created_at: Date;
  created_by: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  last_used_at: Date | null;
}

export function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    name: row.name,
    kind: row.kind,
    mode: row.mode,
    prefix: row.prefix,
    createdAt: row.created_at,
    createdBy: row.created_by,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
    revokedBy: row.revoked_by,
    lastUsedAt: row.last_used_at,
  };
}

/** active | revoked | expired: the states the key lists filter by. */
export function apiKeyState(record: ApiKeyRecord, now = new Date()): 'active' | 'revoked' | 'expired' {
  if (record.revokedAt) return 'revoked';
  if (record.expiresAt && record.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

// "Expiring" warns of a key that stops working soon (a rotated one in its grace period, at most
// 7 days, or a dated key near its date), not of every key that has a date years ahead.
export const EXPIRING_WITHIN_MS = 30 * 86_400_000;

/**
 * What the dashboard's keys page and `cli key list` say of a key: its state, with an active key
 * that stops working within 30 days said to be expiring. One function for both, so a key in its
 * rotation grace period does not read "Expiring" on one and "active" on the other.
 */
export function apiKeyStatus(record: ApiKeyRecord, now = new Date()): 'active' | 'expiring' | 'revoked' | 'expired' {
  const state = apiKeyState(record, now);
  if (state === 'active' && record.expiresAt && record.expiresAt.getTime() - now.getTime() <= EXPIRING_WITHIN_MS) return 'expiring';
  return state;
}
