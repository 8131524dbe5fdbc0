import { networkReason } from '../errors/index.js';

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

/**
 * Why a statement failed when the database itself is the trouble (not answering, unreachable,
 * connection dropped), worded for an operator's log line; undefined for an error of the
 * statement's own. knex's own words for the commonest case mislead: "Timeout acquiring a
 * connection. The pool is probably full. Are you missing a .transacting(trx) call?" is what it
 * says when the server stopped answering and every pooled connection waits on it.
 */
export function databaseUnavailableReason(err: unknown): string | undefined {
  const e = err as { name?: unknown; code?: unknown; message?: unknown } | null;
  if (e?.name === 'KnexTimeoutError') return 'the database did not answer in time (no pooled connection came free)';
  const network = networkReason(e?.code, 'database server');
  if (network) return `cannot reach the database (${network})`;
  const message = typeof e?.message === 'string' ? e.message : '';
  if (/(?:^|- )(?:Connection terminated unexpectedly|Connection terminated due to connection timeout|Client has encountered a connection error and is not queryable)$/.test(message)) return 'the database closed the connection or did not answer in time';
  // admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections, idle_session_timeout.
  if (e?.code === '57P01' || e?.code === '57P02' || e?.code === '57P03' || e?.code === '53300' || e?.code === '57P05') return `the database refused the work (${databaseErrorParts(err).message})`;
  return undefined;
}

/** `err` in a log line: databaseUnavailableReason when it is that, else the server's own message. */
export function describeDatabaseFailure(err: unknown): string {
  return databaseUnavailableReason(err) ?? databaseErrorParts(err).message;
}
