import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { hashToken } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';

// A form that makes a secret (a new API key, an invitation link) redirects to its page (303),
// and the page shows the secret once: the secret waits here, with the session, under the page's
// path, until that page takes it (kept a few seconds more for a repeat of its form: below).
// Never in the address, where history and logs would keep it; never in a cookie, which leaves
// the server. A reload finds nothing and makes nothing.
//
// Sealed (AES-256-GCM) with a key derived from the session's cookie value, which the sessions
// table does not hold (only its hash), and bound to the path: a copy of the table opens nothing,
// and a sealed value moved to another page does not open.

const sealingKey = (sessionToken: string) => Buffer.from(hkdfSync('sha256', sessionToken, '', 'dashboard session flash', 32));

function seal(sessionToken: string, path: string, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(sessionToken), iv).setAAD(Buffer.from(path, 'utf8'));
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64url');
}

function open(sessionToken: string, path: string, sealed: string): unknown {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(sessionToken), raw.subarray(0, 12)).setAAD(Buffer.from(path, 'utf8'));
    decipher.setAuthTag(raw.subarray(12, 28));
    return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8'));
  } catch {
    return undefined;
  }
}

// A flash a GET has shown is not dropped at once: the browser may have abandoned that GET's
// answer (the person pressed the button again while the browser was following the first 303), and
// then the only answer it reads is the repeat's. So a shown flash is kept, sealed as before, for
// SHOWN_KEPT_MS, with when it was shown and the submission token that made it; a repeat of that
// same token within that window (answerRepeated) marks it to be shown once more, to the GET that
// follows the repeat, in the same session only. A reload, Back or Forward without a repeat still
// shows nothing. Past the window the entry is dropped (by the next flash call of the session).
//
// Stored per path as { v: sealed value, s: submission token or null, shown: ms or null, again: ms
// or null }; a bare string (an older release's entry) is an unshown value without a token.

export const SHOWN_KEPT_MS = 15_000;

interface FlashEntry { v: string; s: string | null; shown: number | null; again: number | null }
type Flashes = Record<string, FlashEntry | string>;

const entryOf = (raw: FlashEntry | string | undefined): FlashEntry | undefined =>
  typeof raw === 'string' ? { v: raw, s: null, shown: null, again: null } : raw && typeof raw.v === 'string' ? raw : undefined;

/** Whether `entry`, not shown yet or marked by a repeat within the window, is to be shown now. */
const showable = (e: FlashEntry, now: number) => e.shown === null || (e.again !== null && now - e.again <= SHOWN_KEPT_MS);

/** The session's flashes without those shown longer ago than the window and not to be shown again. */
function pruned(flashes: Flashes, now: number): Flashes {
  const kept: Flashes = {};
  for (const [path, raw] of Object.entries(flashes)) {
    const e = entryOf(raw);
    if (e && (showable(e, now) || now - e.shown! <= SHOWN_KEPT_MS)) kept[path] = raw;
  }
  return kept;
}

/** Runs `change` on the session's flashes with its row locked; writes back what it returns. */
async function withFlashes<T>(db: Db, sessionToken: string, change: (flashes: Flashes, now: number) => { flashes: Flashes; result: T } | undefined): Promise<T | undefined> {
  return db.transaction(async (trx) => {
    const idHash = hashToken(sessionToken);
    // Locked before it is read: of two requests at once, the second reads what the first wrote.
    const row = await trx('sessions').where({ id_hash: idHash }).forUpdate().first<{ flashes: Flashes | null } | undefined>('flashes');
    if (!row) return undefined;
    const now = Date.now();
    const before = row.flashes ?? {};
    const changed = change(before, now);
    if (!changed) return undefined;
    // Written only when something changed: most GETs of a page that takes a flash find none.
    const after = JSON.stringify(pruned(changed.flashes, now));
    if (after !== JSON.stringify(before)) await trx('sessions').where({ id_hash: idHash }).update({ flashes: after });
    return changed.result;
  });
}

/**
 * Keeps `value` for the next GET of `path` in this session (replacing one waiting there), with
 * the submission token of the form that made it, if any (see answerRepeated).
 */
export async function putFlash(db: Db, sessionToken: string, path: string, value: unknown, submission?: string): Promise<void> {
  await withFlashes(db, sessionToken, (flashes) => ({
    flashes: { ...flashes, [path]: { v: seal(sessionToken, path, value), s: submission ?? null, shown: null, again: null } },
    result: undefined,
  }));
}

/**
 * The value waiting for `path`, marked shown in the same transaction: of two requests at once,
 * one gets it. Undefined when there is none (or it was shown, and no repeat of its form has
 * asked for it again within the window), or it no longer reads as `schema` (written by an older
 * release).
 */
export async function takeFlash<S extends z.ZodType>(db: Db, sessionToken: string, path: string, schema: S): Promise<z.output<S> | undefined> {
  const sealed = await withFlashes(db, sessionToken, (flashes, now) => {
    const e = entryOf(flashes[path]);
    if (!e || !showable(e, now)) return { flashes, result: undefined };
    // Shown for the first time: the window starts now. Shown again: the repeat's mark is used.
    const shown: FlashEntry = e.shown === null ? { ...e, shown: now } : { ...e, again: null };
    return { flashes: { ...flashes, [path]: shown }, result: e.v };
  });
  if (!sealed) return undefined;
  const parsed = schema.safeParse(open(sessionToken, path, sealed));
  return parsed.success ? parsed.data : undefined;
}

/** The value waiting for `path`, not shown yet, left waiting (undefined as takeFlash's). */
export async function peekFlash<S extends z.ZodType>(db: Db, sessionToken: string, path: string, schema: S): Promise<z.output<S> | undefined> {
  const row = await db('sessions').where({ id_hash: hashToken(sessionToken) }).first<{ raw: FlashEntry | string | null } | undefined>(db.raw('flashes -> ?::text AS raw', [path]));
  const e = entryOf(row?.raw ?? undefined);
  if (!e || e.shown !== null) return undefined;
  const parsed = schema.safeParse(open(sessionToken, path, e.v));
  return parsed.success ? parsed.data : undefined;
}

/**
 * For a repeated form (its submission token used already): whether the GET that follows it is to
 * show the value of `path`. True when one waits there unshown (its GET not come yet, or abandoned
 * before it ran), or when the value this very token made was shown within the window: the
 * browser may have dropped that answer for this repeat's, so it is marked to be shown once more.
 * The mark is set on an unshown value of this token too: the abandoned GET may yet take it first.
 */
export async function showAgainForRepeat(db: Db, sessionToken: string, path: string, submission: string | undefined): Promise<boolean> {
  const answer = await withFlashes(db, sessionToken, (flashes, now) => {
    const e = entryOf(flashes[path]);
    if (!e) return { flashes, result: false };
    const same = submission !== undefined && e.s === submission;
    if (e.shown !== null && !(same && now - e.shown <= SHOWN_KEPT_MS)) return { flashes, result: false };
    return { flashes: same ? { ...flashes, [path]: { ...e, again: now } } : flashes, result: true };
  });
  return answer ?? false;
}
