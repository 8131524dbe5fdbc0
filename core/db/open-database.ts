import { access, readFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { DATABASE_URL_REQUIRED, type Config } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { stopWithin } from '../process/index.js';
import { unreachableError } from './connection-failure.js';
import { createDb, dropPooledConnections, type Db } from './create-db.js';
import { createDatabaseProbe, type DatabaseProbe } from './database-probe.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { migrateLatest, migrationsAhead, pendingMigrations } from './migrate.js';

export interface OpenDatabase {
  db: Db;
  connectionString: string;
  /** True when this process started the embedded server (and so must stop it). */
  embedded: boolean;
  /** The round trip of every /healthz this process serves: one at a time over the pool. */
  probe: DatabaseProbe;
  close(): Promise<void>;
  /**
   * For a process quitting at once (`npm start`'s second Ctrl-C): stops the embedded server this
   * process started without waiting for the pool, whose queries in flight it cuts off (their
   * transactions roll back), so that none is left running once the process has gone; a
   * close() under way and this share one stop. Nothing when the server is not ours.
   */
  stopServerNow(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR. When another
 * process of ours (say `npm start`) already runs the embedded server, we connect to it instead
 * of starting a second one on the same folder: that is how the CLI works next to a running
 * service. Its port is read from the folder's postmaster.pid, so a service started with another
 * EMBEDDED_PG_PORT is found too. A server on EMBEDDED_PG_PORT that is not this folder's is
 * refused, never used.
 */
export interface OpenDatabaseOptions {
  /**
   * With MIGRATE_ON_START off, refuse a database whose schema is behind this release (default
   * true): a service would start, pass its health check and then fail every call on a missing
   * table. Off only for the migrate commands, whose job that schema is.
   */
  requireCurrentSchema?: boolean;
  /** The pool's DbOptions.idleInTransactionTimeoutMs (the billing worker's). */
  idleInTransactionTimeoutMs?: number;
  /**
   * Without DATABASE_URL, start a new embedded database when DATA_DIR has none (default true).
   * Off for the CLI's commands other than `start`: run from another folder, `org create` made
   * an empty database there, said nothing, and wrote the organization into it.
   */
  createEmbedded?: boolean;
}

export async function openDatabase(config: Config, logger: Logger, applicationName: string, options: OpenDatabaseOptions = {}): Promise<OpenDatabase> {
  let connectionString = config.DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | undefined;
  // A production process without DATABASE_URL would start a database of its own inside its
  // container: every replica its own data, lost with the container.
  if (!connectionString && config.NODE_ENV === 'production') {
    throw new Error(DATABASE_URL_REQUIRED);
  }
  if (!connectionString) {
    const dataDir = path.join(config.DATA_DIR, 'postgres');
    if (options.createEmbedded === false && !(await exists(dataDir))) {
      throw new Error(`no database under ${path.resolve(dataDir)}: run this where npm start runs (its first run creates the database), or set DATA_DIR or DATABASE_URL`);
    }
    const running = await runningServerPort(dataDir);
    const port = running ?? config.EMBEDDED_PG_PORT;
    if (running !== undefined && running !== config.EMBEDDED_PG_PORT) {
      logger.info('using the embedded PostgreSQL another process runs on this data folder', { port: running, dataDir });
    }
    const listening = await isListening('127.0.0.1', port);
    if (listening && running !== undefined) {
      connectionString = `postgres://postgres:postgres@127.0.0.1:${port}/companies`;
    } else if (running !== undefined) {
      throw new Error(`The embedded PostgreSQL in ${dataDir} belongs to a running process but does not answer on port ${running}: wait for it to finish starting, or stop it.`);
    } else if (listening) {
      // Not this folder's server (none runs on it): another checkout's, or another program. Using
      // it would read and write someone else's data as if it were this DATA_DIR's.
      throw new Error(`EMBEDDED_PG_PORT ${port} is already in use on 127.0.0.1 by another server, not the embedded PostgreSQL of ${path.resolve(dataDir)}: stop what listens there, set EMBEDDED_PG_PORT to a free port, or set DATABASE_URL to use that server`);
    } else {
      const handle = await startEmbeddedPostgres({ dataDir: path.join(config.DATA_DIR, 'postgres'), port: config.EMBEDDED_PG_PORT, logger });
      connectionString = handle.connectionString;
      stopEmbedded = handle.stop;
    }
  }
  const db = createDb({ connectionString, poolMax: config.DATABASE_POOL_MAX, applicationName, logger, idleInTransactionTimeoutMs: options.idleInTransactionTimeoutMs });
  // Bounded: a pool whose connections lead to a database that stopped answering (its packets
  // dropped, not refused) waits for their goodbyes for ever, and so did the process's exit.
  // Past the deadline one line says so, the sockets are dropped and the stop goes on.
  const close = async () => {
    if (!(await stopWithin(logger, 'the database pool', () => db.destroy()))) dropPooledConnections(db);
    if (stopEmbedded) await stopEmbedded();
  };
  // Whoever fails to open gets nothing to close, so a failure here closes what was opened: an
  // open pool or a running embedded server would keep the process alive after its error.
  try {
    await reach(db, connectionString, config);
    if (config.MIGRATE_ON_START) {
      const applied = await migrateLatest(db, { logger, lockTimeoutMs: config.MIGRATION_LOCK_TIMEOUT_MS || undefined });
      if (applied.length > 0) logger.info('migrations applied', { applied });
      const ahead = await migrationsAhead(db);
      // The image was rolled back after a newer one migrated: safe, as migrations keep the
      // previous release working, but worth a line while it lasts.
      if (ahead.length > 0) logger.warn(`the database schema is ahead of this release: ${ahead.join(', ')} applied by a newer release; starting anyway, as migrations keep the previous release working`, { ahead });
    } else if (options.requireCurrentSchema !== false) {
      const pending = await pendingMigrations(db);
      if (pending.length > 0) {
        throw new Error(`The database schema is behind this release: ${pending.length} migration${pending.length === 1 ? '' : 's'} not applied, the first ${pending[0]}. Run \`cli migrate up\` (the compose file's migrate job) first, or set MIGRATE_ON_START=true`);
      }
    }
  } catch (err) {
    await close().catch((closeErr: unknown) => logger.warn('could not close the database after failing to open it', { err: closeErr }));
    throw err;
  }
  const stopServerNow = async () => {
    if (stopEmbedded) await stopEmbedded();
  };
  return { db, connectionString, embedded: stopEmbedded !== undefined, probe: createDatabaseProbe(db), close, stopServerNow };
}

/**
 * One query before any other, so that a server that is not there, or will not let us in, is
 * said once in a person's words (DatabaseUnreachableError) rather than as the socket's or the
 * driver's error from whichever query, migration or command happened to come first.
 */
async function reach(db: Db, connectionString: string, config: Config): Promise<void> {
  try {
    await db.raw('SELECT 1');
  } catch (err) {
    throw unreachableError(err, connectionString, config, { firstConnection: true }) ?? err;
  }
}

/**
 * The port of the server running on `dataDir`, from its postmaster.pid (line 1: the PID, line 4:
 * the port), when that process is alive; undefined when none runs (no file, or a stale one left
 * by a crash, which the server's own start recovers from).
 */
async function runningServerPort(dataDir: string): Promise<number | undefined> {
  let lines: string[];
  try {
    lines = (await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, but another user's (the server runs as `postgres` when we are root).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return port;
}

async function exists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}

function isListening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => { socket.destroy(); resolve(false); });
  });
}
