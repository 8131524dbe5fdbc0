// A producer that keeps its pipe open and writes a line now and then (`producer | cli import -`)
// would leave the lines that have arrived in a batch that fills only when more come, or when the
// input ends. When the input goes quiet the importer is told so (IDLE) and writes what it holds.
// A file's next read, or a busy producer's next line, comes well within IDLE_MS, so a file
// still imports in full batches.

import { leaveIterator } from './leave-iterator.js';

export const IDLE: unique symbol = Symbol('input idle');
export type Idle = typeof IDLE;

// Long enough that a producer merely slower than the importer is not written in tiny batches
// (each a transaction); short enough that a line from a quiet one is written within a second.
export const IDLE_MS = 200;

/** The source's items, with IDLE between two of them when the second took `idleMs` or more to come (once per wait). */
export async function* markIdle<T>(source: AsyncIterable<T>, idleMs = IDLE_MS): AsyncGenerator<T | Idle> {
  const items = source[Symbol.asyncIterator]();
  // The source's next item while it is being waited for.
  let waiting: Promise<IteratorResult<T>> | null = null;
  let ended = false;
  try {
    for (;;) {
      waiting = items.next();
      let result = await within(waiting, idleMs);
      if (result === IDLE) {
        yield IDLE;
        result = await waiting;
      }
      waiting = null;
      if (result.done) {
        ended = true;
        return;
      }
      yield result.value;
    }
  } finally {
    // Stopped early (the import failed), maybe while the source still waits for its input, e.g.
    // a pipe that stays quiet (the CLI ends its stdin itself).
    if (!ended) await leaveIterator(items, waiting);
  }
}

function within<T>(promise: Promise<T>, ms: number): Promise<T | Idle> {
  let timer: NodeJS.Timeout | undefined;
  const idle = new Promise<Idle>((resolve) => {
    timer = setTimeout(resolve, ms, IDLE);
  });
  return Promise.race([promise, idle]).finally(() => clearTimeout(timer));
}
