import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';

export interface LineSource {
  lines: AsyncIterable<string>;
  /** Share of the input consumed (0..1), or null when the size is unknown (stdin). */
  fraction(): number | null;
  /** Size of the input in bytes, or null when unknown (stdin). */
  bytes: number | null;
}

// Not readline: its async iterator reads far ahead of the consumer (the whole file, for a
// file of sample data), which breaks both memory use on big files and the progress bar.
// Iterating the stream's chunks pulls only as fast as the importer consumes.
async function* splitLines(input: Readable, onBytes: (n: number) => void): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of input) {
    const buffer = chunk as Buffer;
    onBytes(buffer.length);
    const text = rest + decoder.write(buffer);
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      yield text.charCodeAt(nl - 1) === 13 ? text.slice(start, nl - 1) : text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  rest += decoder.end();
  if (rest !== '') yield rest;
}

/** A file (or "-" for stdin) as lines, with how far through it we are for the progress bar. */
export async function openLineSource(file: string, stdin: Readable): Promise<LineSource> {
  let consumed = 0;
  if (file === '-') return { lines: splitLines(stdin, (n) => (consumed += n)), fraction: () => null, bytes: null };
  const { size } = await stat(file);
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  return {
    lines: splitLines(stream, (n) => (consumed += n)),
    fraction: () => (size > 0 ? Math.min(1, consumed / size) : 1),
    bytes: size,
  };
}
