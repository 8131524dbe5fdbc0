// PLACEHOLDER until the test-services work lands: requires DATABASE_URL.
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { createDb, migrateLatest } from '../../core/db/index.js';

export default async function setup(project: TestProject) {
  const url = process.env.DATABASE_URL;
  if (!url) throw new Error('DATABASE_URL must be set (placeholder global setup)');
  const db = createDb({ connectionString: url });
  await migrateLatest(db);
  await db.destroy();
  project.provide('databaseUrl', url);
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    kafkaBrokers: string;
  }
}
