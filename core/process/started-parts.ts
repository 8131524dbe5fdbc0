import type { Logger } from '../logging/index.js';

export interface StartedParts {
  /** Notes a part that now runs, with how to stop it. */
  add(name: string, stop: () => Promise<void>): void;
  /**
   * Stops every part noted, the last started first; resolves false when one failed to stop.
   * Used both for Ctrl-C and for a start-up that fails half way.
   */
  stopAll(): Promise<boolean>;
}

// A process's parts depend on those started before them (the servers on the API's access
// pipeline, everything on the database pool, the API's usage sink on the worker being there to
// bill what it flushes), so they stop in the reverse order. A part that fails to stop is logged
// and the others are still stopped: one stuck part must not leave the worker polling a database
// that is going away.
export function createStartedParts(logger: Logger): StartedParts {
  const parts: { name: string; stop: () => Promise<void> }[] = [];
  return {
    add(name, stop) {
      parts.push({ name, stop });
    },
    async stopAll() {
      let clean = true;
      for (const part of parts.splice(0).reverse()) {
        try {
          await part.stop();
        } catch (err) {
          clean = false;
          logger.error(`could not stop the ${part.name}`, { err });
        }
      }
      return clean;
    },
  };
}
