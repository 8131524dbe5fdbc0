import { listenForStopSignals, type StopSignal } from '../../stop-signals.js';

// Ctrl-C (SIGINT) or SIGTERM during an import: the first asks the import to stop reading and
// finish what it has read, so that its summary can say what was written; a second one quits
// at once (Postgres rolls back the transactions then open: no company is half-written). Once
// the import has stopped, the CLI ends by raising the same signal on itself (status 130, 143
// for SIGTERM; see cli/stop-signals.ts for why).

export interface StopOnSignal {
  /** Aborted by the first signal. */
  signal: AbortSignal;
  /** The signal that stopped the import, if one did. */
  stoppedBy(): StopSignal | undefined;
  /** Stops listening; if a signal stopped the import, the process then ends by that signal (see above). */
  dispose(): void;
}

/** Listens for SIGINT and SIGTERM until dispose(); `onStop` is told of the first one (to say what happens now). */
export function stopOnSignal(onStop: (signal: StopSignal) => void): StopOnSignal {
  const controller = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const signals = listenForStopSignals({
    first(received) {
      stoppedBy = received;
      onStop(received);
      controller.abort();
    },
    again(received) {
      process.stderr.write(`import: quitting at once (${received}): the batches being written are rolled back\n`);
      signals.raise(received);
    },
  });
  return {
    signal: controller.signal,
    stoppedBy: () => stoppedBy,
    dispose() {
      signals.dispose();
      // At exit, once main has closed the database and stdout is written.
      if (stoppedBy !== undefined) {
        const s = stoppedBy;
        process.once('exit', () => signals.raise(s));
      }
    },
  };
}
