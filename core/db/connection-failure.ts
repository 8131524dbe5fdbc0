import path from 'node:path';
import type { Config } from '../config/index.js';
import { networkReason } from '../errors/index.js';

/**
 * Postgres could not be reached or would not let us in: a person reads its message (the CLI prints
 * it as the one line of a failed command), so it names the server as host:port, never the URL,
 * which may hold a password.
 */
export class DatabaseUnreachableError extends Error {
  override name = 'DatabaseUnreachableError';
}

export interface FirstConnection {
  /** The pool's first connection: nothing else holds one, so a timeout is the server's. */
  firstConnection?: boolean;
}

/**
 * Why connecting to the server of `connectionString` failed, worded for a person ("cannot reach
 * the database at 127.0.0.1:1 (connection refused)"); undefined when `err` is not a failure to
 * connect or sign in, for its caller to report as it is.
 */
export function describeConnectionFailure(err: unknown, connectionString: string, options: FirstConnection = {}): string | undefined {
  const e = err as { code?: unknown; message?: unknown; name?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : '';
  const { where, user } = serverOf(connectionString);
  const reason = networkReason(code, 'server');
  if (reason) return `cannot reach the database at ${where} (${reason})`;
  // knex gave up acquiring a connection: on an empty pool, because the server never answered
  // (later, it may only mean that the pool is full).
  if (options.firstConnection && e?.name === 'KnexTimeoutError') return `cannot reach the database at ${where} (no answer in time)`;
  if (message === 'Connection terminated unexpectedly') return `cannot reach the database at ${where} (the server closed the connection)`;
  // SQLSTATE class 28: wrong password, no such role, or no pg_hba.conf line lets this client in.
  if (code === '28P01' || code === '28000') return `cannot sign in to the database at ${where}${user ? ` as ${user}` : ''} (${message})`;
  if (code === '3D000') return `cannot open the database at ${where} (${message})`;
  // cannot_connect_now (starting up, shutting down) and too_many_connections.
  if (code === '57P03' || code === '53300') return `cannot connect to the database at ${where} (${message})`;
  return undefined;
}

/**
 * `err` as a DatabaseUnreachableError, with where to look, when it is a failure to connect or
 * sign in to the server of `connectionString`; undefined otherwise.
 */
export function unreachableError(err: unknown, connectionString: string, config: Pick<Config, 'DATABASE_URL' | 'DATA_DIR'>, options: FirstConnection = {}): DatabaseUnreachableError | undefined {
  const why = describeConnectionFailure(err, connectionString, options);
  if (!why) return undefined;
  const hint = config.DATABASE_URL ? 'check DATABASE_URL' : `it is the embedded PostgreSQL in ${path.join(config.DATA_DIR, 'postgres')}`;
  return new DatabaseUnreachableError(`${why}; ${hint}`, { cause: err });
}

function serverOf(connectionString: string): { where: string; user?: string } {
  try {
    const url = new URL(connectionString);
    // `?host=/run/postgresql` (a Unix socket folder) wins over the URL's host, as it does for pg.
    const host = url.searchParams.get('host') ?? (url.hostname || 'localhost');
    return { where: `${host}:${url.port || '5432'}`, user: decodeURIComponent(url.username) || undefined };
  } catch {
    return { where: 'the address in DATABASE_URL' };
  }
}

/**
 * Runs `run` again at once, up to twice, while it fails on a pooled connection the server
 * dropped (isDroppedConnection): the pool hands the next try a fresh connection, as it learns of
 * each dropped one (a failover drops them all). Any other failure, or `stop()` turning true (the
 * caller's deadline passed), ends it. For reads: a statement whose connection dropped may
 * have run.
 */
export async function retryOnDroppedConnection<T>(run: () => Promise<T>, stop: () => boolean = () => false): Promise<T> {
  for (let retries = 2; ; retries--) {
    try {
      return await run();
    } catch (err) {
      if (retries === 0 || stop() || !isDroppedConnection(err)) throw err;
    }
  }
}

/**
 * A pooled connection the server ended (an administrator's pg_terminate_backend, a restart or a
 * failover, an idle timeout): the statement failed on that connection only, and the pool hands
 * the next query a fresh one. A statement that failed for its own reasons is not this.
 */
export function isDroppedConnection(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  // admin_shutdown (pg_terminate_backend), crash_shutdown, idle_session_timeout; and the socket
  // itself cut (a connection the server had dropped as it sat in the pool).
  if (e?.code === '57P01' || e?.code === '57P02' || e?.code === '57P05' || e?.code === 'ECONNRESET' || e?.code === 'EPIPE') return true;
  // pg's own words, after the statement's text when knex ran it ("select … - Connection …").
  const message = typeof e?.message === 'string' ? e.message : '';
  return /(?:^|- )(?:Connection terminated unexpectedly|Client has encountered a connection error and is not queryable)$/.test(message);
}
