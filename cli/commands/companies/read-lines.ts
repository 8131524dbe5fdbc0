import { constants, createReadStream } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { readLineBlocks, type LineBlock } from '../../../core/companies/import/line-blocks.js';

export interface LineSource {
  /** The input in blocks of whole lines (see core/companies/import/line-blocks.ts). */
  blocks: AsyncIterable<LineBlock>;
  /** Size of the input in bytes, or null when unknown (stdin). */
  bytes: number | null;
}

// Not readline: its async iterator reads far ahead of the consumer (the whole file, for a
// file of sample data), which breaks memory use on big files. Iterating the stream's chunks
// pulls only as fast as the importer consumes. How far the import is comes from the importer
// (bytes written, not read: see core/companies/import/input-done.ts); this gives the size.
async function* chunksOf(input: Readable): AsyncGenerator<Uint8Array> {
  for await (const chunk of input) yield chunk as Buffer;
}

/** A file (or "-" for stdin) as blocks of lines, with its size for the progress bar. */
export async function openLineSource(file: string, stdin: Readable): Promise<LineSource> {
  if (file === '-') return { blocks: readLineBlocks(chunksOf(stdin)), bytes: null };
  const info = await Promise.all([stat(file), access(file, constants.R_OK)]).then(([s]) => s, (err: NodeJS.ErrnoException) => {
    throw new Error(`cannot read ${file}: ${err.code === 'ENOENT' ? 'no such file' : err.code === 'EACCES' ? 'permission denied' : err.message}`);
  });
  // A folder passes stat; reading it would fail later with EISDIR, after the import started.
  if (!info.isFile()) throw new Error(`cannot read ${file}: not a file`);
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  return { blocks: readLineBlocks(chunksOf(stream)), bytes: info.size };
}
