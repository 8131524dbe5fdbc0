import type { Command } from 'commander';
import { migrateLatest, migrateRollbackAll, migrationStatus, migrationsAhead, openDatabase, type OpenDatabase } from '../../../core/db/index.js';
import type { CliContext } from '../../context.js';

// The compose file runs `migrate up` as a one-shot job before the services start (they run
// with MIGRATE_ON_START=false), so schema changes happen once, not in every replica. Migrators
// started together wait for each other (core/db/migration-lock.ts), so a `migrate up` next to
// starting services is safe too, and a lock left by a killed one is cleared on the next run:
// there is no `migrate unlock` to run by hand.
export function registerMigrateCommands(program: Command, context: () => CliContext): void {
  const migrate = program
    .command('migrate')
    .description('Apply, roll back or list the database migrations.');

  migrate
    .command('up')
    .description('Apply every pending migration, after any other migrator of the database has finished.')
    .action(() => withDatabase(context(), async (ctx, { db }) => {
      const applied = await migrateLatest(db, { logger: ctx.logger, lockTimeoutMs: ctx.config.MIGRATION_LOCK_TIMEOUT_MS || undefined });
      const ahead = await migrationsAhead(db);
      if (applied.length) ctx.out(`applied ${applied.length}: ${applied.join(', ')}`);
      // An older image run after a newer one migrated: nothing to do, and not an error (exit 0),
      // since migrations keep the previous release working.
      else if (ahead.length) ctx.out(`the database schema is ahead of this release: ${ahead.length} applied by a newer release (${ahead.join(', ')}); nothing applied`);
      else ctx.out('already up to date');
    }));

  migrate
    .command('down')
    .description('Roll back every migration: drops all tables and their data.')
    .option('--yes', 'confirm that all data may be dropped')
    .action((options: { yes?: boolean }) => {
      if (!options.yes) {
        // No prompt: the CLI also runs without a terminal (jobs, CI).
        throw new Error('migrate down drops every table and all data; run it again with --yes to confirm');
      }
      return withDatabase(context(), async (ctx, { db }) => {
        const rolledBack = await migrateRollbackAll(db, { logger: ctx.logger });
        ctx.out(rolledBack.length ? `rolled back ${rolledBack.length}: ${rolledBack.join(', ')}` : 'nothing to roll back');
      });
    });

  migrate
    .command('status')
    .description('List every migration and whether it has been applied.')
    .action(() => withDatabase(context(), async (ctx, { db }) => {
      const status = await migrationStatus(db);
      for (const m of status) ctx.out(`${m.applied === 'newer' ? 'applied by a newer release' : m.applied ? 'applied' : 'pending'}  ${m.name}`);
      const pending = status.filter((m) => !m.applied).length;
      const newer = status.filter((m) => m.applied === 'newer').length;
      ctx.out(pending ? `${pending} pending` : newer ? `up to date, and ${newer} applied by a newer release` : 'up to date');
    }));
}

// Not ctx.database(): that one applies migrations on open (MIGRATE_ON_START), which would
// make `status` always report "up to date" and `down` first migrate up. Nor does it make a new
// embedded database: one that `migrate up` made outside the checkout would be empty and unused.
async function withDatabase(ctx: CliContext, use: (ctx: CliContext, database: OpenDatabase) => Promise<void>): Promise<void> {
  const database = await openDatabase({ ...ctx.config, MIGRATE_ON_START: false }, ctx.logger, 'cli-migrate', { requireCurrentSchema: false, createEmbedded: false });
  try {
    await use(ctx, database);
  } finally {
    await database.close();
  }
}
