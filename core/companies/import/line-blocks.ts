// An import file travels as blocks of whole lines, in the bytes read from disk: the parser
// threads decode and split them, so the main thread (which also feeds the database) neither
// decodes ~13 kB per company nor copies each line into a message of its own. A block always
// ends at a line break, and a UTF-8 sequence never contains the byte of one ("\n" is 0x0A;
// every byte of a multi-byte sequence is 0x80 or above), so each block decodes on its own.

export interface LineBlock {
  /** Whole lines: up to and including a "\n", except a file's last line when it has none. */
  bytes: Uint8Array;
  /** Number of the block's first line in the input, from 1. */
  firstLine: number;
  /** Lines in the block, blank ones included. */
  lineCount: number;
}

const NEWLINE = 0x0a;

/** The input's bytes, as they come, regrouped into blocks of whole lines (about as big as what comes). */
export async function* readLineBlocks(input: AsyncIterable<Uint8Array>): AsyncGenerator<LineBlock> {
  let nextLine = 1;
  let rest: Buffer = Buffer.alloc(0);
  for await (const chunk of input) {
    const bytes = rest.length === 0 ? Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength) : Buffer.concat([rest, chunk]);
    const end = bytes.lastIndexOf(NEWLINE) + 1;
    if (end === 0) {
      rest = bytes;
      continue;
    }
    const block = { bytes: bytes.subarray(0, end), firstLine: nextLine, lineCount: countNewlines(bytes.subarray(0, end)) };
    nextLine += block.lineCount;
    rest = bytes.subarray(end);
    yield block;
  }
  if (rest.length > 0) yield { bytes: rest, firstLine: nextLine, lineCount: 1 };
}

function countNewlines(bytes: Buffer): number {
  let n = 0;
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

/** A block's lines as text (a block's bytes), without their line breaks ("\n" or "\r\n"): what is parsed. */
export function blockLines(bytes: Uint8Array): string[] {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  const lines: string[] = [];
  let start = 0;
  for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
    lines.push(text.charCodeAt(nl - 1) === 13 ? text.slice(start, nl - 1) : text.slice(start, nl));
    start = nl + 1;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

/**
 * A block's lines as they were read, each with its line break ("\n" or "\r\n"; none for a last
 * line without one): views into the block, not copies, and nothing decoded. Same lines as
 * blockLines, so the same line numbers.
 */
export function blockLineBytes(bytes: Uint8Array): Uint8Array[] {
  const block = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const lines: Uint8Array[] = [];
  let start = 0;
  for (let nl = block.indexOf(NEWLINE); nl !== -1; nl = block.indexOf(NEWLINE, start)) {
    lines.push(block.subarray(start, nl + 1));
    start = nl + 1;
  }
  if (start < block.length) lines.push(block.subarray(start));
  return lines;
}
