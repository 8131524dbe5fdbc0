export { createDb, createListenClient, type Db, type DbOptions } from './create-db.js';
export { migrateLatest, migrateRollbackAll } from './migrate.js';
export { startEmbeddedPostgres, type EmbeddedPostgresHandle, type EmbeddedPostgresOptions } from './embedded-postgres.js';
export { openDatabase, type OpenDatabase } from './open-database.js';
