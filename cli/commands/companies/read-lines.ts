import { constants, createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { readLineBlocks, type LineBlock } from '../../../core/companies/import/line-blocks.js';

export interface LineSource {
  /** The input in blocks of whole lines (see core/companies/import/line-blocks.ts). */
  blocks: AsyncIterable<LineBlock>;
  /** Share of the input consumed (0..1), or null when the size is unknown (stdin). */
  fraction(): number | null;
  /** Size of the input in bytes, or null when unknown (stdin). */
  bytes: number | null;
}

// Not readline: its async iterator reads far ahead of the consumer (the whole file, for a
// file of sample data), which breaks both memory use on big files and the progress bar.
// Iterating the stream's chunks pulls only as fast as the importer consumes.
async function* counted(input: Readable, onBytes: (n: number) => void): AsyncGenerator<Uint8Array> {
  for await (const chunk of input) {
    const buffer = chunk as Buffer;
    onBytes(buffer.length);
    yield buffer;
  }
}

/** A file (or "-" for stdin) as blocks of lines, with how far through it we are for the progress bar. */
export async function openLineSource(file: string, stdin: Readable): Promise<LineSource> {
  let consumed = 0;
  if (file === '-') return { blocks: readLineBlocks(counted(stdin, (n) => (consumed += n))), fraction: () => null, bytes: null };
  const info = await Promise.all([stat(file), access(file, constants.R_OK)]).then(([s]) => s, (err: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message}`);
  });
  // A folder passes stat; reading it would fail later with EISDIR, after the import started.
  if (!info.isFile()) throw new Error(`cannot read ${file}: not a file`);
  const size = info.size;
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  return {
    blocks: readLineBlocks(counted(stream, (n) => (consumed += n))),
    fraction: () => (size > 0 ? Math.min(1, consumed / size) : 1),
    bytes: size,
  };
}
