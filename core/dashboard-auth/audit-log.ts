import type { Knex } from 'knex';
import { countedKeysetPage, countRows, type Db, type RowPosition } from '../db/index.js';
import { apiKeyLabels } from '../auth/api-key-labels.js';
import { userEmails } from './user-emails.js';

export interface AuditEntry {
  organizationId: string | null;
  /** A user id (`usr_…`) or `system`. */
  actor: string;
  /** `key.created`, `organization.plan_set`, … */
  action: string;
  details?: Record<string, unknown>;
}

export async function recordAudit(db: Db, entry: AuditEntry): Promise<void> {
  await db('audit_log').insert({
    organization_id: entry.organizationId,
    actor: entry.actor,
    action: entry.action,
    details: entry.details ? JSON.stringify(entry.details) : null,
  });
}

/**
 * Makes a change and writes its audit row in one transaction: a change is never saved without
 * its row, and no row names a change that was rolled back. `change` must do all its writes
 * through the transaction it is given. `entryFor` returns null when the change turned out to
 * change nothing (an override cleared that did not exist): no row then.
 */
export function withAudit<T>(db: Db, change: (trx: Db) => Promise<T>, entryFor: (result: T) => AuditEntry | null): Promise<T> {
  return db.transaction(async (trx) => {
    const result = await change(trx);
    const entry = entryFor(result);
    if (entry) await recordAudit(trx, entry);
    return result;
  });
}

export interface AuditRow {
  id: number;
  at: Date;
  actor: string;
  actorEmail: string | null;
  action: string;
  details: Record<string, unknown> | null;
  /** The API keys the details name (keyId, from, to), as the keys page shows them: "name (sk_live_AbCd…)". */
  keyLabels: Record<string, string>;
  /**
   * The e-mail of the person a row names by id alone (`userId`, no `email`: a removal logged
   * before removals named the address), as the account has it now; absent once it is gone.
   */
  memberEmails: Record<string, string>;
}

export interface AuditPage {
  rows: AuditRow[];
  page: number;
  pages: number;
  total: number;
  /** Cursors of the pages beside this one (null: no rows that way): `older` after its last
   * row, `newer` before its first. */
  older: string | null;
  newer: string | null;
}

const auditRowsOf = (db: Db, organizationId: string) => db('audit_log as a').leftJoin('users as u', 'u.id', 'a.actor').where('a.organization_id', organizationId);

type AuditRecord = { id: number | string; at: Date; actor: string; email: string | null; action: string; details: Record<string, unknown> | null };

async function selectAuditRows(db: Db, query: ReturnType<typeof auditRowsOf>): Promise<AuditRow[]> {
  const rows = await query
    .orderBy('a.id', 'desc')
    .select<AuditRecord[]>('a.id', 'a.at', 'a.actor', 'u.email', 'a.action', 'a.details');
  return describedRows(db, rows);
}

/** Audit rows as read, with the e-mail of their actor, as the pages show them (`AuditRow`). */
async function describedRows(db: Db, rows: AuditRecord[]): Promise<AuditRow[]> {
  const labels = await apiKeyLabels(db, rows.flatMap((r) => keyIdsOf(r.details)));
  const emails = await userEmails(db, rows.map((r) => memberIdOf(r.details) ?? null));
  return rows.map((r) => {
    const memberId = memberIdOf(r.details);
    return {
      id: Number(r.id), at: r.at, actor: r.actor, actorEmail: r.email, action: r.action, details: r.details,
      keyLabels: Object.fromEntries(keyIdsOf(r.details).filter((id) => labels.has(id)).map((id) => [id, labels.get(id)!])),
      memberEmails: memberId && emails.has(memberId) ? { [memberId]: emails.get(memberId)! } : {},
    };
  });
}

// A person named by id only: rows that name the e-mail too are read as they were written (the
// address then, not whatever the account holds now).
const memberIdOf = (details: Record<string, unknown> | null): string | undefined =>
  typeof details?.userId === 'string' && details.email === undefined ? details.userId : undefined;

// Key actions name keys by id (key.created, key.revoked: keyId; key.rotated: from, to), which
// the keys page never shows: people know a key by its name and display prefix.
const KEY_DETAILS = ['keyId', 'from', 'to'];
const keyIdsOf = (details: Record<string, unknown> | null): string[] =>
  KEY_DETAILS.map((name) => details?.[name]).filter((v): v is string => typeof v === 'string' && v.startsWith('key_'));


export function recentAudit(db: Db, organizationId: string, limit = 20): Promise<AuditRow[]> {
  return selectAuditRows(db, auditRowsOf(db, organizationId).limit(limit));
}

/** An action, or an action whose details have these values (`organization.product_set` of one product). */
export type AuditChange = string | { action: string; details: Record<string, string> };

/** The organization's audit rows after row `afterId` that are one of `changes`, newest first: what changed something since a page showed it. */
export function auditSince(db: Db, organizationId: string, afterId: number, changes: readonly AuditChange[], limit = 5): Promise<AuditRow[]> {
  const actions = changes.filter((c): c is string => typeof c === 'string');
  const detailed = changes.filter((c): c is Exclude<AuditChange, string> => typeof c !== 'string');
  return selectAuditRows(db, auditRowsOf(db, organizationId).where('a.id', '>', afterId).where((any) => {
    if (actions.length > 0) void any.orWhereIn('a.action', actions);
    for (const { action, details } of detailed) {
      void any.orWhere((one) => {
        void one.where('a.action', action);
        for (const [name, value] of Object.entries(details)) void one.whereRaw('a.details->>? = ?', [name, value]);
      });
    }
    if (changes.length === 0) void any.whereRaw('false');
  }).limit(limit));
}

/**
 * The kinds of change the activity page filters by, each with the action prefixes it holds: an
 * organization whose scripts make keys all day can still find who changed a member or the cap.
 */
export const auditKinds = {
  keys: ['key.'],
  members: ['member.'],
  credits: ['credits.', 'allowance.'],
  settings: ['organization.'],
  alerts: ['alerts.'],
  usage: ['usage.'],
} as const satisfies Record<string, readonly string[]>;
export type AuditKind = keyof typeof auditKinds;
export const isAuditKind = (value: unknown): value is AuditKind => typeof value === 'string' && Object.hasOwn(auditKinds, value);

// Rows whose action starts with one of the kind's prefixes (ours: no LIKE wildcard in them).
const actionOfKind = (column: string, kind: AuditKind | undefined) => (q: Knex.QueryBuilder) => {
  if (kind) q.where((w) => { for (const prefix of auditKinds[kind]) w.orWhere(column, 'like', `${prefix}%`); });
};

// An activity page's cursor is its row's id: the log's order, unique, never changing for a row.
const parseAuditCursor = (cursor: string): string | null => (/^\d{1,18}$/.test(cursor) ? cursor : null);

/** The organization's audit rows of a kind (all: none), newest first; past a row (null: from
 * the newest, or the oldest), nearest first: `older` newest first, `newer` oldest first. By id,
 * the order of its index (organization_id, id DESC, migration 012). */
function auditRowsBeyond(db: Db, organizationId: string, kind: AuditKind | undefined, from: string | null, direction: 'older' | 'newer') {
  const rows = db('audit_log').where({ organization_id: organizationId }).modify(actionOfKind('action', kind)).orderBy('id', direction === 'older' ? 'desc' : 'asc');
  if (from) rows.andWhere('id', direction === 'older' ? '<' : '>', from);
  return rows;
}

/**
 * An organization's audit log, newest first, one page at a time (the admins' activity page), of
 * one kind of change or all. A page asked for by number is read by offset; the pages beside it
 * from a row (`keysetRows`, as the ledger's): a change made while an admin moves from page to
 * page does not push the last row of one page onto the next. Counted to the end, so a page
 * reached from a row is numbered too, by the rows newer than it.
 */
export async function auditPage(db: Db, organizationId: string, options: { pageSize?: number; kind?: AuditKind } & RowPosition = {}): Promise<AuditPage> {
  const pageSize = options.pageSize ?? 50;
  const total = await countRows(auditRowsBeyond(db, organizationId, options.kind, null, 'older'));
  const read = await countedKeysetPage(
    {
      cursorOf: (row) => String(row.id),
      parseCursor: parseAuditCursor,
      beyond: (from, direction) => auditRowsBeyond(db, organizationId, options.kind, from, direction),
    },
    options,
    total,
    pageSize,
  );
  const emails = await userEmails(db, read.rows.map((r) => r.actor as string));
  const rows = await describedRows(db, read.rows.map((r) => ({ id: r.id, at: r.at, actor: r.actor, email: emails.get(r.actor) ?? null, action: r.action, details: r.details })));
  return { rows, page: read.page, pages: read.pages, total, older: read.older, newer: read.newer };
}

export interface MembershipEvent {
  action: 'member.role_changed' | 'member.removed';
  at: Date;
  /** The role a role change gave (`to`); undefined for a removal. */
  role?: string;
  /** The person's address as the row names it (rows before removals named it have none). */
  email?: string;
}

/**
 * The newest audit row that changed one person's membership of an organization: a change of
 * their role, or their removal. The dashboard's gate reads it to tell someone it turns away
 * that their role changed, or that they were removed, rather than give a bare refusal; the
 * members page, to say whom a removal it has just made removed.
 */
export async function lastMembershipEvent(db: Db, organizationId: string, userId: string): Promise<MembershipEvent | undefined> {
  const row = await db('audit_log')
    .where({ organization_id: organizationId })
    .whereIn('action', ['member.role_changed', 'member.removed'])
    .whereRaw("details->>'userId' = ?", [userId])
    .orderBy('id', 'desc')
    .first<{ action: MembershipEvent['action']; at: Date; details: Record<string, unknown> | null } | undefined>('action', 'at', 'details');
  if (!row) return undefined;
  const { to, email } = row.details ?? {};
  return {
    action: row.action, at: row.at,
    ...(row.action === 'member.role_changed' && typeof to === 'string' ? { role: to } : {}),
    ...(typeof email === 'string' ? { email } : {}),
  };
}
