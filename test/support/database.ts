import { inject } from 'vitest';
import { createDb, type Db } from '../../core/db/index.js';
import { createDatabase, databaseUrl, dropDatabase, uniqueDatabaseName } from '../services/databases.js';

/**
 * Knex on the run's migrated database. Tests share it (with files running in parallel), so
 * each test makes its own organizations, keys and rows. Call `db.destroy()` in afterAll.
 */
export function testDb(options: { poolMax?: number; applicationName?: string } = {}): Db {
  return createDb({ connectionString: inject('databaseUrl'), poolMax: options.poolMax ?? 4, applicationName: options.applicationName ?? 'test' });
}

export interface ScratchDatabase {
  url: string;
  /** Drops the database, closing any connection still open on it. */
  drop(): Promise<void>;
}

/** A new, empty (unmigrated) database on the run's server, for tests that need one to themselves. */
export async function createScratchDatabase(prefix = 'scratch'): Promise<ScratchDatabase> {
  const serverUrl = inject('databaseUrl');
  const name = uniqueDatabaseName(prefix);
  await createDatabase(serverUrl, name);
  return { url: databaseUrl(serverUrl, name), drop: () => dropDatabase(serverUrl, name) };
}
