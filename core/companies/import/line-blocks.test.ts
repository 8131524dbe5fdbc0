import { describe, expect, it } from 'vitest';
import { parseDossierLine } from './parse-dossier-line.js';
import { inReads } from '../../../test/support/byte-reads.js';
import { blockLineBytes, blockLines, MAX_LINE_BYTES, MAX_LINE_CHARACTERS, readLineBlocks, type LineBlock } from './line-blocks.js';


async function blocksOf(text: string, sizes: number[]): Promise<LineBlock[]> {
  const out: LineBlock[] = [];
  for await (const block of readLineBlocks(inReads(Buffer.from(text), sizes))) out.push(block);
  return out;
}

const text = ['{"legalName":"Società Agricola Caffè"}', '', '{"b":2}\r', '   ', '{"città":"Forlì"}', 'x'.repeat(40), 'last line without break'].join('\n');
const expected = ['{"legalName":"Società Agricola Caffè"}', '', '{"b":2}', '   ', '{"città":"Forlì"}', 'x'.repeat(40), 'last line without break'];

describe('line blocks', () => {
  it('when reads cut lines and characters anywhere then the blocks hold whole lines, numbered from 1', async () => {
    // Sizes 1..17 cut inside every line and inside every two-byte character at some point.
    for (let size = 1; size <= 17; size++) {
      const blocks = await blocksOf(text, [size, size + 3]);
      expect(blocks.flatMap((b) => blockLines(b.bytes)), `reads of ${size}`).toEqual(expected);
      let next = 1;
      for (const block of blocks) {
        expect(block.firstLine).toBe(next);
        expect(blockLines(block.bytes)).toHaveLength(block.lineCount);
        next += block.lineCount;
      }
      expect(next - 1).toBe(expected.length);
    }
  });

  it('when a block holds CRLF, blank, Latin-1 and unterminated lines then blockLineBytes gives each line\'s bytes with its own break, as many as blockLines', () => {
    const lines = [Buffer.from('\uFEFF{"a":1}\r\n'), Buffer.from('\n'), Buffer.from('{"città":"Forlì"}\r\n', 'latin1'), Buffer.from('\r\n'), Buffer.from('{"b":2}\n'), Buffer.from('last')];
    const block = Buffer.concat(lines);
    const bytes = blockLineBytes(block);
    expect(bytes.map((line, i) => Buffer.compare(line, lines[i]!))).toEqual(lines.map(() => 0));
    expect(bytes).toHaveLength(blockLines(block).length);
    expect(blockLineBytes(block.subarray(0, block.length - 4))).toHaveLength(5);
  });

  it('when the input ends with a line break then no empty last line is made', async () => {
    const blocks = await blocksOf('a\nb\n', [100]);
    expect(blocks).toHaveLength(1);
    expect(blocks[0]!.lineCount).toBe(2);
    expect(blockLines(blocks[0]!.bytes)).toEqual(['a', 'b']);
  });

  it('when the input is empty then there are no blocks', async () => {
    expect(await blocksOf('', [10])).toEqual([]);
  });

  describe('when a line is longer than any company can be', () => {
    const READ = 64 * 1024;
    // `size` bytes of JSON-looking text with no "\n", in reads of 64 kB (one buffer, yielded again
    // and again: the test itself holds no copy of the line).
    async function* noBreak(size: number, before: string, after: string): AsyncGenerator<Uint8Array> {
      yield Buffer.from(before);
      const read = Buffer.alloc(READ, '{"legalName":"x"}\r');
      for (let left = size; left > 0; left -= READ) yield read.subarray(0, Math.min(READ, left));
      yield Buffer.from(after);
    }
    async function collect(input: AsyncIterable<Uint8Array>): Promise<{ blocks: LineBlock[]; largest: number; ms: number }> {
      const started = performance.now();
      const blocks: LineBlock[] = [];
      let largest = 0;
      for await (const block of readLineBlocks(input)) {
        largest = Math.max(largest, block.bytes.byteLength);
        // Only small blocks are kept for the assertions: the others are measured and dropped.
        blocks.push(block.bytes.byteLength < 1024 ? block : { ...block, bytes: new Uint8Array() });
      }
      return { blocks, largest, ms: performance.now() - started };
    }
    const reasons = (blocks: LineBlock[]) => blocks.flatMap((b) => blockLines(b.bytes).map((text, i) => {
      const entry = parseDossierLine(text, b.firstLine + i);
      return entry === null ? null : entry.ok ? `line ${entry.line}: ok` : `line ${entry.rejection.line}: ${entry.rejection.reason}`;
    }));

    it('when 50 MB come with no line break (CR-only line ends) then no block holds them, the line is refused with a hint, and the lines after keep their numbers', async () => {
      const size = 50 * 1024 * 1024;
      const dossier = (name: string) => JSON.stringify({ fiscalCode: '00905811006', legalName: name });
      const { blocks, largest, ms } = await collect(noBreak(size, `${dossier('Prima S.r.l.')}\n\n`, `\n${dossier('Dopo S.r.l.')}\n${dossier('Ultima S.r.l.')}`));
      expect(largest).toBeLessThan(1024);
      expect(ms).toBeLessThan(5_000);
      expect(blocks.map((b) => [b.firstLine, b.lineCount])).toEqual([[1, 2], [3, 2], [5, 1]]);
      // What the progress bar counts: every byte of the input, the line not kept included.
      const dossierBytes = (name: string) => Buffer.byteLength(dossier(name));
      expect(blocks.map((b) => b.inputBytes)).toEqual([dossierBytes('Prima S.r.l.') + 2, size + 1 + dossierBytes('Dopo S.r.l.') + 1, dossierBytes('Ultima S.r.l.')]);
      expect(reasons(blocks)).toEqual([
        'line 1: ok',
        null,
        `line 3: line too long: ${size} bytes, at most ${MAX_LINE_CHARACTERS} characters for one company (CR-only line ends, or a JSON array instead of one object per line?)`,
        'line 4: ok',
        'line 5: ok',
      ]);
    });

    it('when the input ends with no line break at all then the line is refused as one with no line break, without gathering it', async () => {
      const size = 30 * 1024 * 1024 + 7;
      const { blocks, largest } = await collect(noBreak(size, '[', ']'));
      expect(largest).toBeLessThan(1024);
      expect(blocks.map((b) => [b.firstLine, b.lineCount, b.inputBytes])).toEqual([[1, 1, size + 2]]);
      expect(reasons(blocks)).toEqual([
        `line 1: line too long: no line break in ${size + 2} bytes to the end of the input, at most ${MAX_LINE_CHARACTERS} characters for one company (CR-only line ends, or a JSON array instead of one object per line?)`,
      ]);
      // What --rejects gets in the line's place.
      expect(Buffer.from(blockLineBytes(blocks[0]!.bytes)[0]!).toString()).toBe(`[line too long, not kept: ${size + 2} bytes, no line break to the end of the input]`);
    });

    it('when a line holds 4 MiB characters of 3 bytes each and a CRLF then it is kept whole; one byte more and it is replaced, also inside one read', async () => {
      // The longest line the character bound allows, in bytes: MAX_LINE_CHARACTERS "€" and "\r".
      const longest = Buffer.concat([Buffer.from('€'.repeat(MAX_LINE_CHARACTERS)), Buffer.from('\r\n')]);
      expect(longest.length - 1).toBe(MAX_LINE_BYTES);
      const over = Buffer.concat([Buffer.from('x'), longest]);
      for (const size of [1 << 20, over.length + longest.length + 10]) {
        const blocks = await blocksOfBytes(Buffer.concat([longest, over, Buffer.from('{"c":3}\n')]), size);
        const lines = blocks.flatMap((b) => blockLines(b.bytes));
        expect(lines.map((l) => l.length), `reads of ${size}`).toEqual([MAX_LINE_CHARACTERS, 41, 7]);
        expect(lines[1]).toBe(`[line too long, not kept: ${over.length - 1} bytes]`);
        expect(blocks.reduce((n, b) => n + b.lineCount, 0)).toBe(3);
        expect(blocks.reduce((n, b) => n + b.inputBytes, 0), `reads of ${size}`).toBe(longest.length + over.length + 8);
      }
    });
  });
});

async function blocksOfBytes(bytes: Buffer, size: number): Promise<LineBlock[]> {
  const out: LineBlock[] = [];
  for await (const block of readLineBlocks(inReads(bytes, [size]))) out.push(block);
  return out;
}
