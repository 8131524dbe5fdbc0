/**
 * A database error in Postgres's own words. Knex puts the whole SQL statement in front of the
 * driver's message; whoever reads a rejection or a dead letter needs only the server's
 * message, its SQLSTATE and its detail line (which names the offending value).
 */
export function databaseErrorParts(err: unknown): { message: string; sqlstate: string | null; detail: string | null } {
  const e = err as { message?: unknown; code?: unknown; detail?: unknown } | null;
  const message = String(e?.message ?? err);
  const sqlstate = typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : null;
  const own = sqlstate && message.includes(' - ') ? message.slice(message.lastIndexOf(' - ') + 3) : message;
  return { message: own.trim(), sqlstate, detail: typeof e?.detail === 'string' ? e.detail : null };
}
