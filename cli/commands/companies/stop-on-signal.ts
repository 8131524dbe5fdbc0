import { constants } from 'node:os';

// Ctrl-C (SIGINT) or SIGTERM during an import: the first asks the import to stop reading and
// finish what it has read, so that its summary can say what was written; a second one quits
// at once (Postgres rolls back the transactions then open: no company is half-written). Once
// the import has stopped, the CLI ends by raising the same signal on itself, as a process
// that had not caught it would have ended: a shell loop (`for f in *.jsonl; do npm run -s cli
// -- import "$f"; done`) stops at a Ctrl-C only when its command died of the signal, not when
// it exited with status 130. The shell's status is then 130 (143 for SIGTERM).

export type StopSignal = 'SIGINT' | 'SIGTERM';
const SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM'];

// `npm run` passes on the signal it got to the command, and the terminal sends Ctrl-C to both,
// so one Ctrl-C can arrive twice within a millisecond (measured): a repeat this soon is the same one.
const REPEAT_AFTER_MS = 250;

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
  let stoppedAt = 0;

  const handle = (received: StopSignal) => {
    if (stoppedBy === undefined) {
      stoppedBy = received;
      stoppedAt = performance.now();
      onStop(received);
      controller.abort();
      return;
    }
    if (performance.now() - stoppedAt < REPEAT_AFTER_MS) return;
    process.stderr.write(`import: quitting at once (${received}): the batches being written are rolled back\n`);
    raise(received);
  };
  const listeners = SIGNALS.map((s) => [s, () => handle(s)] as const);
  for (const [s, listener] of listeners) process.on(s, listener);
  const removeListeners = () => {
    for (const [s, listener] of listeners) process.removeListener(s, listener);
  };

  // Our listeners gone, the signal's default action ends the process (it would not, were
  // another listener left: the exit code then still says which signal).
  function raise(s: StopSignal): void {
    removeListeners();
    process.exitCode = 128 + constants.signals[s];
    process.kill(process.pid, s);
  }

  return {
    signal: controller.signal,
    stoppedBy: () => stoppedBy,
    dispose() {
      removeListeners();
      // At exit, once main has closed the database and stdout is written.
      if (stoppedBy !== undefined) {
        const s = stoppedBy;
        process.once('exit', () => raise(s));
      }
    },
  };
}
