import type { Knex } from 'knex';
import { countedKeysetPage, createdAtKeyset, type CreatedAtPosition, type Db, type RowPosition } from '../db/index.js';
import { apiKeyColumns, toApiKeyRecord, type ApiKeyRecord, type ApiKeyRow } from './api-key-record.js';

/** The states `apiKeyState` tells apart, which `cli key list --state` and the keys page filter by. */
export const apiKeyStates = ['active', 'revoked', 'expired'] as const;
export type ApiKeyState = (typeof apiKeyStates)[number];

export interface ApiKeysPage {
  /** Newest first. */
  rows: ApiKeyRecord[];
  page: number;
  pages: number;
  /** Keys in the state asked for (all of them without one). */
  total: number;
  /** The organization's keys in each state, and in all (those the search matches, with one). */
  counts: Record<ApiKeyState | 'all', number>;
  /** Cursors of the pages beside this one (null: no keys that way): `older` after its last
   * key, `newer` before its first. */
  older: string | null;
  newer: string | null;
}

// The same tests as apiKeyState, against the same `now`: a key the page lists as active must be
// one the filter "active" picks, even when it expires between two queries.
function inState(query: Knex.QueryBuilder, state: ApiKeyState, now: Date): Knex.QueryBuilder {
  if (state === 'revoked') return query.whereNotNull('revoked_at');
  query.whereNull('revoked_at');
  if (state === 'expired') return query.whereNotNull('expires_at').andWhere('expires_at', '<=', now);
  return query.where((w) => void w.whereNull('expires_at').orWhere('expires_at', '>', now));
}

// Keys whose name holds the search, or whose display prefix starts with it (a prefix copied
// from a log line), case aside. The search is text, not a pattern: LIKE's wildcards are escaped.
function matching(query: Knex.QueryBuilder, search: string | undefined): Knex.QueryBuilder {
  if (!search) return query;
  const literal = search.replace(/[\\%_]/g, (c) => `\\${c}`);
  return query.where((w) => void w.whereILike('name', `%${literal}%`).orWhereILike('prefix', `${literal}%`));
}

/**
 * One page of an organization's keys (the dashboard's keys page), newest first with the id as
 * tie-breaker, optionally only those in one state or matching a search; a page past the end is
 * the last, one that is not a number the first (pageWindow, as the ledger and activity pages).
 * The pages beside a page are read from a row (`keysetRows`, as the ledger's and the activity
 * page's): a key made while an admin moves from page to page (a script making keys) does not push
 * the last key of one page onto the next; such a page is numbered by the keys newer than it.
 */
export async function apiKeysPage(
  db: Db,
  organizationId: string,
  options: { state?: ApiKeyState | null; search?: string; pageSize?: number; now?: Date } & RowPosition = {},
): Promise<ApiKeysPage> {
  const pageSize = options.pageSize ?? 50;
  const now = options.now ?? new Date();
  const counted = await matching(db('api_keys').where({ organization_id: organizationId }), options.search)
    .first<{ all: string | number; revoked: string | number; expired: string | number }>(
      db.raw('COUNT(*) AS "all"'),
      db.raw('COUNT(*) FILTER (WHERE revoked_at IS NOT NULL) AS revoked'),
      db.raw('COUNT(*) FILTER (WHERE revoked_at IS NULL AND expires_at <= ?) AS expired', [now]),
    );
  const all = Number(counted?.all ?? 0);
  const revoked = Number(counted?.revoked ?? 0);
  const expired = Number(counted?.expired ?? 0);
  const counts = { all, revoked, expired, active: all - revoked - expired };
  const total = options.state ? counts[options.state] : all;
  // The keys listed, past one (null: from the newest, or the oldest), nearest first: `older`
  // newest first, `newer` oldest first.
  const keyset = createdAtKeyset(db, 'key');
  const beyond = (from: CreatedAtPosition | null, direction: 'older' | 'newer') => {
    const query = matching(db('api_keys').where({ organization_id: organizationId }), options.search).select([...apiKeyColumns]);
    if (options.state) inState(query, options.state, now);
    return keyset.beyond(query, from, direction);
  };
  const read = await countedKeysetPage({ cursorOf: keyset.cursorOf, parseCursor: keyset.parseCursor, beyond }, options, total, pageSize);
  return { rows: (read.rows as ApiKeyRow[]).map(toApiKeyRecord), page: read.page, pages: read.pages, total, counts, older: read.older, newer: read.newer };
}
