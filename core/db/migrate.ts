import type { Knex } from 'knex';
import { migrations } from '../../migrations/index.js';
import { databaseErrorParts } from './database-error.js';

const source: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: async () => migrations,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

const config: Knex.MigratorConfig = { migrationSource: source, tableName: 'knex_migrations' };

export async function migrateLatest(db: Knex): Promise<string[]> {
  let started: string | undefined;
  try {
    const [, applied] = (await db.migrate.latest({ ...config, migrationSource: noting((name) => (started = name)) })) as [number, string[]];
    return applied;
  } catch (err) {
    throw migrationFailure(err, started);
  }
}

// The source, telling `onUp` which migration is about to run: knex names a failed one only in
// a warning, and cannot be asked afterwards (pending migrations that all run in transactions
// share one, so every one of them is pending again after any fails).
function noting(onUp: (name: string) => void): Knex.MigrationSource<(typeof migrations)[number]> {
  return {
    ...source,
    getMigration: async (m) => ({
      ...m,
      up: async (knex: Knex) => {
        onUp(m.name);
        await m.up(knex);
      },
    }),
  };
}

/**
 * knex rejects with the failed statement's error alone, its whole SQL in front of the server's
 * words: said instead as the migration that failed and Postgres's message. An error before any
 * migration ran (a held lock, a lost connection) is left as it is, for the caller to word.
 */
function migrationFailure(err: unknown, started: string | undefined): unknown {
  if (started === undefined) return err;
  const { message, sqlstate } = databaseErrorParts(err);
  return new Error(`migration ${started} failed: ${message}${sqlstate ? ` [SQLSTATE ${sqlstate}]` : ''}`, { cause: err });
}

/** Rolls back every migration (used by the migrations up/down test and `cli migrate down`). */
export async function migrateRollbackAll(db: Knex): Promise<string[]> {
  const [, rolledBack] = (await db.migrate.rollback(config, true)) as [number, string[]];
  return rolledBack;
}

export interface MigrationStatus {
  name: string;
  applied: boolean;
}

/** Every known migration in order, with whether it has been applied (`cli migrate status`). */
export async function migrationStatus(db: Knex): Promise<MigrationStatus[]> {
  const [completed] = (await db.migrate.list(config)) as [{ name: string }[], unknown[]];
  const applied = new Set(completed.map((m) => m.name));
  return migrations.map((m) => ({ name: m.name, applied: applied.has(m.name) }));
}
