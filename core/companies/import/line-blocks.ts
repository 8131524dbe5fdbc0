// An import file travels as blocks of whole lines, in the bytes read from disk: the parser
// threads decode and split them, so the main thread (which also feeds the database) neither
// decodes ~13 kB per company nor copies each line into a message of its own. A block always
// ends at a line break, and a UTF-8 sequence never contains the byte of one ("\n" is 0x0A;
// every byte of a multi-byte sequence is 0x80 or above), so each block decodes on its own.

export interface LineBlock {
  /** Whole lines: up to and including a "\n", except a file's last line when it has none; a line too long is replaced (tooLongLine). */
  bytes: Uint8Array;
  /** Number of the block's first line in the input, from 1. */
  firstLine: number;
  /** Lines in the block, blank ones included. */
  lineCount: number;
  /**
   * The input's bytes the block stands for: `bytes`'s length, but a too-long line counts its own
   * bytes, not its stand-in's (a progress bar counting stand-ins stopped short of 100%).
   */
  inputBytes: number;
}

const NEWLINE = 0x0a;

/** A company's line, at most: ~300 times a sample company's, and no copy of a runaway file into the store. */
export const MAX_LINE_CHARACTERS = 4 * 1024 * 1024;

// The most bytes a line within MAX_LINE_CHARACTERS can take, its "\r" included (blockLines
// drops it): UTF-8 spends at most 3 bytes per UTF-16 unit (4 for a pair of them), and bytes
// that are not UTF-8 decode to one U+FFFD per 1 to 3 bytes. A longer line can only be too
// long, so its bytes are no longer kept: without a bound, a file with no "\n" (CR-only line
// ends, a JSON array on one line) was gathered whole, then decoded, until the process ran out
// of memory or of string length (0x1fffffe8 characters).
export const MAX_LINE_BYTES = 3 * MAX_LINE_CHARACTERS + 1;

// What stands in a block for a line past MAX_LINE_BYTES: one short line that parseDossierLine
// turns into the rejection (readTooLongLine). It is what --rejects gets for that line, so it
// reads as a note. A file's own line of that text is not JSON, so it is rejected either way.
const TOO_LONG = /^\[line too long, not kept: (\d+) bytes(, no line break to the end of the input)?\]$/;

export function tooLongLine(bytes: number, ended: boolean): Buffer {
  return Buffer.from(`[line too long, not kept: ${bytes} bytes${ended ? ']\n' : ', no line break to the end of the input]'}`);
}

/** A line readLineBlocks put in place of one too long: how many bytes it had, and whether a line break ended it. */
export function readTooLongLine(text: string): { bytes: number; ended: boolean } | null {
  if (text.charCodeAt(0) !== 0x5b) return null;
  const match = TOO_LONG.exec(text);
  return match === null ? null : { bytes: Number(match[1]), ended: match[2] === undefined };
}

/**
 * The input's bytes, as they come, regrouped into blocks of whole lines (about as big as what
 * comes). A line past MAX_LINE_BYTES is not kept: its bytes are counted up to its line break
 * (or the input's end) and a tooLongLine stands in its place, so memory stays bounded and
 * later lines keep their numbers.
 */
export async function* readLineBlocks(input: AsyncIterable<Uint8Array>): AsyncGenerator<LineBlock> {
  let nextLine = 1;
  // The unfinished line: its bytes so far, or once past MAX_LINE_BYTES only their count.
  let rest: Buffer[] = [];
  let restBytes = 0;
  let skipping = false;
  for await (const chunk of input) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    const first = bytes.indexOf(NEWLINE);
    if (first === -1) {
      restBytes += bytes.length;
      if (!skipping && restBytes > MAX_LINE_BYTES) {
        skipping = true;
        rest = [];
      }
      if (!skipping) rest.push(bytes);
      continue;
    }
    // The block: the unfinished line (or what stands for it) and the chunk up to its last line
    // break, as views of the chunk between lines that are too long.
    const parts: Buffer[] = [];
    let from = 0;
    let lineCount = 1;
    if (skipping || restBytes + first > MAX_LINE_BYTES) {
      parts.push(tooLongLine(restBytes + first, true));
      from = first + 1;
    } else {
      parts.push(...rest);
    }
    let start = first + 1;
    for (let nl = bytes.indexOf(NEWLINE, start); nl !== -1; nl = bytes.indexOf(NEWLINE, start)) {
      lineCount++;
      if (nl - start > MAX_LINE_BYTES) {
        parts.push(bytes.subarray(from, start), tooLongLine(nl - start, true));
        from = nl + 1;
      }
      start = nl + 1;
    }
    parts.push(bytes.subarray(from, start));
    const block = { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), firstLine: nextLine, lineCount, inputBytes: restBytes + start };
    nextLine += lineCount;
    yield block;
    const tail = bytes.subarray(start);
    restBytes = tail.length;
    skipping = restBytes > MAX_LINE_BYTES;
    rest = skipping || restBytes === 0 ? [] : [tail];
  }
  if (skipping) yield { bytes: tooLongLine(restBytes, false), firstLine: nextLine, lineCount: 1, inputBytes: restBytes };
  else if (restBytes > 0) yield { bytes: rest.length === 1 ? rest[0]! : Buffer.concat(rest, restBytes), firstLine: nextLine, lineCount: 1, inputBytes: restBytes };
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
