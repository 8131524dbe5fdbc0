import { constants, createReadStream, fstatSync, open, type Stats } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import net from 'node:net';
import { promisify } from 'node:util';
import type { Readable } from 'node:stream';
import { leaveIterator } from '../../../core/companies/import/leave-iterator.js';
import { readLineBlocks, type LineBlock } from '../../../core/companies/import/line-blocks.js';
import { refusalOfInputStart, SIGNATURE_BYTES } from './input-signature.js';

/** Which file on disk the input is (to tell whether another path names the same one). */
export interface FileIdentity {
  dev: number;
  ino: number;
}

export interface LineSource {
  /** The input in blocks of whole lines (see core/companies/import/line-blocks.ts). */
  blocks: AsyncIterable<LineBlock>;
  /** Size of the input in bytes, or null when unknown (stdin). */
  bytes: number | null;
  /** The file read, also when it is standard input redirected from one; null for a pipe or terminal. */
  identity: FileIdentity | null;
  /** Whether `stop` ended the blocks before the input's end. */
  cutShort(): boolean;
  /**
   * Stops reading a pipe (standard input, or a FIFO such as `<(cat file)`): a read still
   * waiting for a quiet producer's next line would keep the CLI up after a failed import.
   */
  close(): void;
}

export interface LineSourceOptions {
  /** Once aborted, no further block is read: the blocks end after those already handed out. */
  stop?: AbortSignal;
}

// Not readline: its async iterator reads far ahead of the consumer (the whole file, for a
// file of sample data), which breaks memory use on big files. Iterating the stream's chunks
// pulls only as fast as the importer consumes. How far the import is comes from the importer
// (bytes written, not read: see core/companies/import/input-done.ts); this gives the size.
//
// The first bytes are read at once, before the import starts: a compressed or UTF-16 input
// is refused (input-signature.ts) before anything is written. They then lead the chunks.
async function checkedChunks(input: Readable, file: string): Promise<AsyncGenerator<Uint8Array>> {
  const chunks = input[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const head: Buffer[] = [];
  let size = 0;
  let ended = false;
  while (size < SIGNATURE_BYTES) {
    const next = await chunks.next();
    if (next.done) {
      ended = true;
      break;
    }
    head.push(next.value);
    size += next.value.length;
  }
  const refusal = refusalOfInputStart(Buffer.concat(head, size), file);
  if (refusal !== null) {
    input.destroy();
    throw new Error(refusal);
  }
  async function* all(): AsyncGenerator<Uint8Array> {
    try {
      yield* head;
      while (!ended) {
        const next = await chunks.next();
        if (next.done) ended = true;
        else yield next.value;
      }
    } finally {
      // Stopped early: the stream is closed, as a for-await left early closes it.
      if (!ended) await chunks.return?.();
    }
  }
  return all();
}

// The blocks until `stop` is aborted: one being waited for then is not waited for (a quiet
// pipe may not send it for minutes), so the import ends with what it has read.
async function* untilStopped<T>(source: AsyncIterable<T>, stop: AbortSignal, onCut: () => void): AsyncGenerator<T> {
  const items = source[Symbol.asyncIterator]();
  const stopped = new Promise<null>((resolve) => {
    if (stop.aborted) resolve(null);
    else stop.addEventListener('abort', () => resolve(null), { once: true });
  });
  let waiting: Promise<IteratorResult<T>> | null = null;
  let ended = false;
  try {
    while (!stop.aborted) {
      waiting = items.next();
      const next = await Promise.race([waiting, stopped]);
      if (next === null) break;
      waiting = null;
      if (next.done) {
        ended = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!ended) {
      onCut();
      // A read still under way ends by itself (a file's soon, stdin's when the CLI destroys it).
      await leaveIterator(items, waiting);
    }
  }
}

function identityOf(info: Stats): FileIdentity | null {
  return info.isFile() ? { dev: info.dev, ino: info.ino } : null;
}

/** A file (or "-" for stdin) as blocks of lines, with its size for the progress bar. */
export async function openLineSource(file: string, stdin: Readable, options: LineSourceOptions = {}): Promise<LineSource> {
  let cut = false;
  const cutShort = () => cut;
  const blocks = (chunks: AsyncGenerator<Uint8Array>) => (options.stop ? untilStopped(readLineBlocks(chunks), options.stop, () => (cut = true)) : readLineBlocks(chunks));
  if (file === '-') {
    let identity: FileIdentity | null = null;
    try {
      identity = identityOf(fstatSync(0));
    } catch {
      // No descriptor 0 (closed): nothing to compare, and reading says what is wrong.
    }
    return { blocks: blocks(await checkedChunks(stdin, file)), bytes: null, identity, cutShort, close: () => stdin.destroy() };
  }
  const info = await Promise.all([stat(file), access(file, constants.R_OK)]).then(([s]) => s, (err: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message}`);
  });
  // A pipe by name (a shell's `<(cat file)` is /dev/fd/63, or a mkfifo) is read as standard
  // input is, of unknown size. Through a socket, not a file stream: a file stream's read of a
  // quiet pipe holds a thread-pool thread, which no destroy() ends, so the CLI could not exit.
  if (info.isFIFO()) {
    // Waits (off the main thread) for a writer, as `cat` does on a FIFO nobody has opened yet.
    const fd = await promisify(open)(file, constants.O_RDONLY);
    const pipe = new net.Socket({ fd, readable: true, writable: false });
    return { blocks: blocks(await checkedChunks(pipe, file)), bytes: null, identity: null, cutShort, close: () => pipe.destroy() };
  }
  // A folder passes stat; reading it would fail later with EISDIR, after the import started.
  if (!info.isFile()) throw new Error(`cannot read ${file}: not a file`);
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  return { blocks: blocks(await checkedChunks(stream, file)), bytes: info.size, identity: identityOf(info), cutShort, close: () => undefined };
}
