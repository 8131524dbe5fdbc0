import type { Db } from '../db/index.js';

/**
 * The e-mail of each actor that is one of our users (`usr_…`): ledger rows and audit rows name
 * who acted by user id, which finance cannot read. Other actors (`cli:…`, `system`) are absent
 * from the map and shown as they are.
 */
export async function userEmails(db: Db, actors: readonly (string | null)[]): Promise<Map<string, string>> {
  const ids = [...new Set(actors.filter((a): a is string => typeof a === 'string' && a.startsWith('usr_')))];
  if (ids.length === 0) return new Map();
  const rows = await db('users').whereIn('id', ids).select<{ id: string; email: string }[]>('id', 'email');
  return new Map(rows.map((r) => [r.id, r.email]));
}
