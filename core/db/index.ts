export { databaseErrorParts } from './database-error.js';
export { createDb, createListenClient, type Db, type DbOptions } from './create-db.js';
export { migrateLatest, migrateRollbackAll, migrationStatus, type MigrationStatus } from './migrate.js';
export { startEmbeddedPostgres, type EmbeddedPostgresHandle, type EmbeddedPostgresOptions } from './embedded-postgres.js';
export { openDatabase, type OpenDatabase } from './open-database.js';
export { createNotificationListener, type NotificationListener, type NotificationListenerOptions, type NotificationHandler, type ConnectionHandler } from './notification-listener.js';
export { pageWindow } from './page-window.js';
export { escapeNul, holdsNul, NUL_MESSAGE, nulPaths, withoutNul } from './storable-text.js';
export { likeEscape } from './like-pattern.js';
