import type { Knex } from 'knex';
import { migrations } from '../../migrations/index.js';
import type { Logger } from '../logging/index.js';
import { databaseErrorParts } from './database-error.js';
import { withMigrationLock, type MigrationLockHolder } from './migration-lock.js';

const source: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: async () => migrations,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

// knex refuses every command ("The migration directory is corrupt, the following files are
// missing") when the table names a migration this release does not have. That is what a
// rollback of the image looks like: a newer release migrated, then this one started on its
// schema. Migrations keep the previous release working (docs/api.md, "Upgrades, rollbacks and
// backups"), so those rows are reported as the newer release's (migrationsAhead) and the rest
// goes on.
const config = { migrationSource: source, tableName: 'knex_migrations', disableMigrationsListValidation: true } satisfies Knex.MigratorConfig;
// knex's own lock: one row, is_locked set while a migrator runs (see clearStaleKnexLock).
const knexLockTable = `${config.tableName}_lock`;

export interface MigrateOptions {
  /**
   * Where waiting for another migrator (info, then warn every 30 s while it lasts) and clearing
   * a stale lock (warn) are said.
   */
  logger?: Logger;
  /** How often a wait for another migrator is said again (default 30 s). */
  remindEveryMs?: number;
  /**
   * How long a migration run in a transaction may wait for a table lock (MIGRATION_LOCK_TIMEOUT_MS)
   * before it fails and is rolled back; unset: as long as it takes.
   */
  lockTimeoutMs?: number;
}

export async function migrateLatest(db: Knex, options: MigrateOptions = {}): Promise<string[]> {
  return serialised(db, options, async () => {
    let started: string | undefined;
    try {
      const [, applied] = (await db.migrate.latest({ ...config, migrationSource: noting((name) => (started = name), options.lockTimeoutMs) })) as [number, string[]];
      return applied;
    } catch (err) {
      throw migrationFailure(err, started, options.lockTimeoutMs);
    }
  });
}

// The source, telling `onUp` which migration is about to run: knex names a failed one only in
// a warning, and cannot be asked afterwards (pending migrations that all run in transactions
// share one, so every one of them is pending again after any fails).
//
// It also bounds how long a migration waits for a lock. An ALTER TABLE queued behind a long
// transaction (a report, an idle-in-transaction session) holds its place in the table's lock
// queue, and every reader and writer of that table then waits behind it: the service stalls
// while the migration waits. With lock_timeout it fails instead, and is rolled back with its
// transaction. Only for migrations run in a transaction (SET LOCAL ends with it): the others
// build indexes CONCURRENTLY, which blocks no reader or writer, and would fail for no reason
// while they wait for older transactions to end.
function noting(onUp: (name: string) => void, lockTimeoutMs: number | undefined): Knex.MigrationSource<(typeof migrations)[number]> {
  return {
    ...source,
    getMigration: async (m) => ({
      ...m,
      up: async (knex: Knex) => {
        onUp(m.name);
        const inTransaction = !('config' in m && (m.config as { transaction?: boolean } | undefined)?.transaction === false);
        if (lockTimeoutMs !== undefined && inTransaction) await knex.raw(`SET LOCAL lock_timeout = ${Math.trunc(lockTimeoutMs)}`);
        await m.up(knex);
      },
    }),
  };
}

// Every run that changes the schema goes through here. knex's own lock is a row it sets and
// clears again, which only makes a second migrator fail ("Migration table is already locked")
// rather than wait, and which stays set when its holder is killed or loses its connection
// between taking and freeing it (knex commits it first whenever the migrations do not all run
// in one transaction: one of them has `transaction: false`, or a rollback), failing every
// later run until cleared. Holding our advisory lock, we are the only migrator of this
// database: a row still set is such a leftover, and is cleared.
function serialised<T>(db: Knex, options: MigrateOptions, run: () => Promise<T>): Promise<T> {
  const { logger } = options;
  const waiting = (holder: MigrationLockHolder | null, waitedMs: number) => {
    const who = holder ? { holderPid: holder.pid, holderApplication: holder.application, holderClient: holder.client, holderSince: holder.since.toISOString() } : {};
    // The first line is routine (replicas starting together take turns); still waiting after
    // that is worth a look: a long migration, or a migrator stuck with the lock.
    if (waitedMs === 0) logger?.info('waiting for another process to finish its migrations', who);
    else logger?.warn(`still waiting for another process to finish its migrations, after ${Math.round(waitedMs / 1000)} s${holder ? `: PostgreSQL session ${holder.pid} (${holder.application || 'no application_name'}) holds the migration lock` : ''}`, { ...who, waitedS: Math.round(waitedMs / 1000) });
  };
  return withMigrationLock(db, { waiting }, async () => {
    await clearStaleKnexLock(db, logger);
    return run();
  }, { remindEveryMs: options.remindEveryMs });
}

async function clearStaleKnexLock(db: Knex, logger: Logger | undefined): Promise<void> {
  // Absent on a database never migrated (knex creates it on its first run).
  if (!(await db.schema.hasTable(knexLockTable))) return;
  const cleared = await db(knexLockTable).where({ is_locked: 1 }).update({ is_locked: 0 });
  if (cleared === 0) return;
  const msg = 'cleared a stale migration lock: a migrator stopped without releasing it (killed, or its connection lost); no other migrator runs now';
  // openDatabase gives knex the process's logger (createDb), so without one of our own the
  // line still reaches the process's log, as a "knex warning".
  if (logger) logger.warn(msg, { table: knexLockTable });
  else db.client.logger.warn?.(`${msg} (table ${knexLockTable})`);
}

/**
 * knex rejects with the failed statement's error alone, its whole SQL in front of the server's
 * words: said instead as the migration that failed and Postgres's message. An error before any
 * migration ran (a held lock, a lost connection) is left as it is, for the caller to word.
 */
function migrationFailure(err: unknown, started: string | undefined, lockTimeoutMs: number | undefined): unknown {
  if (started === undefined) return err;
  const { message, sqlstate } = databaseErrorParts(err);
  // lock_not_available: lock_timeout ran out (see `noting`).
  if (sqlstate === '55P03' && lockTimeoutMs !== undefined) {
    return new Error(`migration ${started} could not lock a table it changes within ${formatSeconds(lockTimeoutMs)} (MIGRATION_LOCK_TIMEOUT_MS): another transaction holds a lock on it (a long query, or a session idle in a transaction: see pg_stat_activity). It was rolled back with its transaction: nothing of it is applied, and nothing waits behind it any longer; retry once that transaction is gone [SQLSTATE 55P03]`, { cause: err });
  }
  return new Error(`migration ${started} failed: ${message}${sqlstate ? ` [SQLSTATE ${sqlstate}]` : ''}`, { cause: err });
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** Rolls back every migration (used by the migrations up/down test and `cli migrate down`). */
export async function migrateRollbackAll(db: Knex, options: MigrateOptions = {}): Promise<string[]> {
  return serialised(db, options, async () => {
    // This release cannot undo what it does not know.
    const ahead = await migrationsAhead(db);
    if (ahead.length > 0) {
      throw new Error(`The database schema is ahead of this release: ${ahead.join(', ')} ${ahead.length === 1 ? 'was' : 'were'} applied by a newer release. Roll back with that release's \`cli migrate down\``);
    }
    const [, rolledBack] = (await db.migrate.rollback(config, true)) as [number, string[]];
    return rolledBack;
  });
}

export interface MigrationStatus {
  name: string;
  /** `newer`: in the database, applied by a newer release this one does not know. */
  applied: boolean | 'newer';
}

/** Names of applied migrations this release does not have (a newer release's), in the order applied. */
export async function migrationsAhead(db: Knex): Promise<string[]> {
  const known = new Set(migrations.map((m) => m.name));
  return (await appliedNames(db)).filter((name) => !known.has(name));
}

// Only reads: knex's own `migrate.list` would create its table in a database never migrated.
async function appliedNames(db: Knex): Promise<string[]> {
  const { rows } = (await db.raw('SELECT to_regclass(?) IS NOT NULL AS present', [config.tableName])) as { rows: { present: boolean }[] };
  if (!rows[0]?.present) return [];
  return ((await db(config.tableName).select('name').orderBy('id')) as { name: string }[]).map((r) => r.name);
}

/**
 * The migrations of this release the database has not applied, in order; none when its schema is
 * this release's or a newer one's (a rolling upgrade runs the older release on it for a while).
 */
export async function pendingMigrations(db: Knex): Promise<string[]> {
  const applied = new Set(await appliedNames(db));
  return migrations.filter((m) => !applied.has(m.name)).map((m) => m.name);
}

/**
 * Every known migration in order, with whether it has been applied, then those a newer release
 * applied (`cli migrate status`).
 */
export async function migrationStatus(db: Knex): Promise<MigrationStatus[]> {
  const [completed] = (await db.migrate.list(config)) as [{ name: string }[], unknown[]];
  const applied = new Set(completed.map((m) => m.name));
  const known = new Set(migrations.map((m) => m.name));
  return [
    ...migrations.map((m) => ({ name: m.name, applied: applied.has(m.name) })),
    ...completed.filter((m) => !known.has(m.name)).map((m) => ({ name: m.name, applied: 'newer' as const })),
  ];
}
