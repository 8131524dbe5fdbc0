import { constants } from 'node:os';

// Ctrl-C (SIGINT) and SIGTERM for a command that stops cleanly at the first and quits at once at
// a second (`import`, `start`). `npm run` and `npm start` pass on the signal they got to the
// command, and a terminal's Ctrl-C reaches both, so one Ctrl-C arrives twice within a
// millisecond (measured): a repeat this soon is the same Ctrl-C, not a second one. Listening
// with process.once instead leaves that copy to Node's default action, which ends the process
// in the middle of its clean stop.

export type StopSignal = 'SIGINT' | 'SIGTERM';
const SIGNALS: readonly StopSignal[] = ['SIGINT', 'SIGTERM'];
const REPEAT_AFTER_MS = 250;

export interface StopSignals {
  dispose(): void;
  /**
   * Stops listening and ends the process by `signal`, as a process that had not caught it would
   * end: a shell loop (`for f in …; do npm run -s cli -- import "$f"; done`) stops at a Ctrl-C
   * only when its command died of the signal, not when it exited with status 130. The shell's
   * status is then 130 (143 for SIGTERM).
   */
  raise(signal: StopSignal): void;
}

export interface StopSignalHandlers {
  first(signal: StopSignal): void;
  /** The next one later than a repeat of the first; called once. One more after that (and its
   * own repeat window) ends the process by the signal at once, whatever `again` is waiting for. */
  again(signal: StopSignal): void;
}

/** Listens for SIGINT and SIGTERM until dispose() or raise(). */
export function listenForStopSignals(handlers: StopSignalHandlers): StopSignals {
  let firstAt: number | undefined;
  let againAt: number | undefined;
  const handle = (received: StopSignal) => {
    const now = performance.now();
    if (firstAt === undefined) {
      firstAt = now;
      handlers.first(received);
    } else if (againAt === undefined) {
      if (now - firstAt < REPEAT_AFTER_MS) return;
      againAt = now;
      handlers.again(received);
    } else if (now - againAt >= REPEAT_AFTER_MS) {
      raise(received);
    }
  };
  const listeners = SIGNALS.map((s) => [s, () => handle(s)] as const);
  for (const [s, listener] of listeners) process.on(s, listener);
  const dispose = () => {
    for (const [s, listener] of listeners) process.removeListener(s, listener);
  };
  // Our listeners gone, the signal's default action ends the process (it would not, were
  // another listener left: the exit code then still says which signal).
  function raise(signal: StopSignal): void {
    dispose();
    process.exitCode = 128 + constants.signals[signal];
    process.kill(process.pid, signal);
  }
  return { dispose, raise };
}

/** What a person does to quit at once after `signal` (for the line saying the command is stopping). */
export function quitAtOnceHint(signal: StopSignal): string {
  return signal === 'SIGINT' ? 'press Ctrl-C again to quit at once' : 'send SIGTERM again to quit at once';
}
