import type { Knex } from 'knex';
import { migrations } from '../../migrations/index.js';

const source: Knex.MigrationSource<(typeof migrations)[number]> = {
  getMigrations: async () => migrations,
  getMigrationName: (m) => m.name,
  getMigration: async (m) => m,
};

const config: Knex.MigratorConfig = { migrationSource: source, tableName: 'knex_migrations' };

export async function migrateLatest(db: Knex): Promise<string[]> {
  const [, applied] = (await db.migrate.latest(config)) as [number, string[]];
  return applied;
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
