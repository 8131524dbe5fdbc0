import { once } from 'node:events';
import type { Writable } from 'node:stream';

export interface LineWriter {
  /** Queues one line (the line end is added); resolves at once unless the stream is full. */
  line(text: string): Promise<void>;
  /** Writes what is queued. */
  flush(): Promise<void>;
}

/**
 * Output of unbounded size (exports, generated samples) to a stream: lines go out a few
 * hundred at a time, and the writer waits for 'drain' when the stream is full. Writing line by
 * line with `process.stdout.write` and ignoring its answer queues everything a slow reader has
 * not taken yet in memory: a million-row ledger export piped into another program peaked at
 * 1.3 GB of RSS that way. Lines end in `lineEnd`: a newline, or CR LF for CSV (RFC 4180).
 */
export function createLineWriter(out: Writable, linesPerWrite = 200, lineEnd = '\n'): LineWriter {
  let queued: string[] = [];
  const flush = async () => {
    if (queued.length === 0) return;
    const ok = out.write(queued.join(''));
    queued = [];
    if (!ok) await once(out, 'drain');
  };
  return {
    async line(text) {
      queued.push(text + lineEnd);
      if (queued.length >= linesPerWrite) await flush();
    },
    flush,
  };
}
