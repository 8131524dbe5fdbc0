export { registerMigrateCommands } from './migrate.js';
