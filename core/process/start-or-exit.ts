import { createLogger, type LogFields } from '../logging/index.js';
import { createStartedParts, type StartedParts } from './started-parts.js';

// Far longer than closing a pool and a few listeners takes.
const LINGER_MS = 10_000;

/**
 * A service process's start-up, run by its main.ts: parse the config, open the database, build
 * the services, listen; `start` notes each part it starts with how to stop it. When a step
 * throws, the process says why in one log line, stops what it started (the last first) and
 * ends with exit code 1. Left uncaught, the same error was Node's dump (stack, `[cause]`
 * object, Node's version), naming no setting to change, and the pool it had opened was never
 * closed.
 */
export async function startOrExit(base: LogFields, start: (parts: Pick<StartedParts, 'add'>) => Promise<void>): Promise<void> {
  // The process's own logger is made from its config, which may be what failed: this one writes
  // the same JSON lines with the same fields, at any LOG_LEVEL, since whoever reads the logs of
  // a process that ended must find out why.
  const logger = createLogger({ level: 'error', base });
  const parts = createStartedParts(logger);
  try {
    await start(parts);
  } catch (err) {
    // The message: the errors start-up can meet are worded for an operator where they are
    // thrown (ConfigError, DatabaseUnreachableError, a failed migration, serveOnPort), as `npm
    // start` prints them. A programming error is not, and whoever fixes it needs where it was
    // thrown: its stack goes in the same line's `err`. Said before stopping, so a part that
    // hangs cannot swallow it.
    logger.error(`could not start: ${err instanceof Error ? err.message : String(err)}`, isProgrammingError(err) ? { err } : undefined);
    await parts.stopAll();
    // Not process.exit() at once: the process ends by itself once what it opened is closed, and
    // the start-up failure tests count on that to see that it was. Something left open would
    // keep it alive, never restarted by its supervisor, so after a while it is ended anyway.
    process.exitCode = 1;
    setTimeout(() => {
      logger.error(`still running ${LINGER_MS / 1000} s after failing to start: something it opened was not closed; exiting`);
      process.exit(1);
    }, LINGER_MS).unref();
  }
}

/** A fault in the code rather than in its surroundings: no setting an operator changes fixes it. */
function isProgrammingError(err: unknown): boolean {
  return err instanceof TypeError || err instanceof ReferenceError || err instanceof RangeError || err instanceof SyntaxError;
}
