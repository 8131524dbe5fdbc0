import { parseConfig, type Config } from '../core/config/index.js';
import { openDatabase, unreachableError, type OpenDatabase } from '../core/db/index.js';
import { createLogger, type Logger } from '../core/logging/index.js';

/**
 * The CLI's composition root. Commands get config and logger eagerly, and open the database
 * only when they need it (so `--help` never starts Postgres).
 */
export interface CliContext {
  config: Config;
  logger: Logger;
  /** Opens (once) and returns the database; closed by the CLI when the command ends. */
  database(): Promise<OpenDatabase>;
  /**
   * A command's failure worded as the database being unreachable (where, why, what to check),
   * when it is one: a server that goes away during a command, say; undefined otherwise.
   */
  databaseFailure(err: unknown): string | undefined;
  /** Run by main after the command (closes what was opened). */
  close(): Promise<void>;
  /** Who runs the command, recorded on ledger adjustments and audit rows. */
  actor: string;
  out: (line: string) => void;
  /** Whether `out` is a terminal: a person reading, not a file or a script. */
  outIsTerminal: boolean;
}

export function createCliContext(env: Record<string, string | undefined>): CliContext {
  const config = parseConfig(env);
  // The CLI prints results on stdout; its own logs stay quiet unless asked for.
  const logger = createLogger({ level: env.LOG_LEVEL ? config.LOG_LEVEL : 'warn' });
  let opened: Promise<OpenDatabase> | undefined;
  let connectionString: string | undefined;
  return {
    config,
    logger,
    // Only `start` makes a new embedded database (it opens its own): any other command run
    // outside the checkout would make an empty one there and quietly use it.
    database: () => (opened ??= openDatabase(config, logger, 'cli', { createEmbedded: false }).then((database) => {
      connectionString = database.connectionString;
      return database;
    })),
    databaseFailure: (err) => (connectionString ? unreachableError(err, connectionString, config)?.message : undefined),
    close: async () => {
      // A database that failed to open closed itself, and its error is the command's to report.
      const database = await opened?.catch(() => undefined);
      await database?.close();
    },
    actor: `cli:${env.USER ?? 'operator'}`,
    out: (line) => process.stdout.write(line + '\n'),
    outIsTerminal: Boolean(process.stdout.isTTY),
  };
}
