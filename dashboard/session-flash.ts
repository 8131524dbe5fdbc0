import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { hashToken } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';

// A form that makes a secret (a new API key, an invitation link) redirects to its page (303),
// and the page shows the secret once: the secret waits here, with the session, under the page's
// path, until that page takes it. Never in the address, where history and logs would keep it;
// never in a cookie, which leaves the server. A reload finds nothing and makes nothing.
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

/** Keeps `value` for the next GET of `path` in this session (replacing one waiting there). */
export async function putFlash(db: Db, sessionToken: string, path: string, value: unknown): Promise<void> {
  await db('sessions')
    .where({ id_hash: hashToken(sessionToken) })
    .update({ flashes: db.raw("coalesce(flashes, '{}'::jsonb) || jsonb_build_object(?::text, ?::text)", [path, seal(sessionToken, path, value)]) });
}

/**
 * The value waiting for `path`, removed in the same statement: of two requests at once, one gets
 * it. Undefined when there is none, or it no longer reads as `schema` (written by an older
 * release).
 */
export async function takeFlash<S extends z.ZodType>(db: Db, sessionToken: string, path: string, schema: S): Promise<z.output<S> | undefined> {
  const idHash = hashToken(sessionToken);
  // The row is locked before it is read, so a second request waits and then reads it without.
  const { rows } = await db.raw<{ rows: { sealed: string }[] }>(
    `UPDATE sessions s SET flashes = s.flashes - ?::text
       FROM (SELECT id_hash, flashes ->> ?::text AS sealed FROM sessions WHERE id_hash = ? FOR UPDATE) old
      WHERE s.id_hash = old.id_hash AND old.sealed IS NOT NULL
      RETURNING old.sealed`,
    [path, path, idHash],
  );
  const sealed = rows[0]?.sealed;
  if (!sealed) return undefined;
  const parsed = schema.safeParse(open(sessionToken, path, sealed));
  return parsed.success ? parsed.data : undefined;
}

/** The value waiting for `path`, left waiting (undefined as takeFlash's). */
export async function peekFlash<S extends z.ZodType>(db: Db, sessionToken: string, path: string, schema: S): Promise<z.output<S> | undefined> {
  const row = await db('sessions').where({ id_hash: hashToken(sessionToken) }).first<{ sealed: string | null } | undefined>(db.raw('flashes ->> ?::text AS sealed', [path]));
  if (!row?.sealed) return undefined;
  const parsed = schema.safeParse(open(sessionToken, path, row.sealed));
  return parsed.success ? parsed.data : undefined;
}

/** Whether a value waits for `path` in this session, not yet shown. */
export async function hasFlash(db: Db, sessionToken: string, path: string): Promise<boolean> {
  const row = await db('sessions').where({ id_hash: hashToken(sessionToken) }).whereRaw('(flashes ->> ?::text) IS NOT NULL', [path]).first('id_hash');
  return row !== undefined;
}
