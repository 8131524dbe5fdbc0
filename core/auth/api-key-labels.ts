import type { Db } from '../db/index.js';

/**
 * Keys as the keys page shows them, "name (sk_live_AbCd…)", by id: records (audit rows, ledger
 * rows) name a key by its id, which no page shows. A key id with no row is absent from the map.
 */
export async function apiKeyLabels(db: Db, ids: readonly (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => typeof id === 'string' && id.startsWith('key_')))];
  if (wanted.length === 0) return new Map();
  const rows = await db('api_keys').whereIn('id', wanted).select<{ id: string; name: string; prefix: string }[]>('id', 'name', 'prefix');
  return new Map(rows.map((r) => [r.id, `${r.name} (${r.prefix}…)`]));
}
