import { describe, expect, it } from 'vitest';
import { blockLineBytes, blockLines, readLineBlocks, type LineBlock } from './line-blocks.js';

async function* reads(bytes: Buffer, sizes: number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    yield bytes.subarray(at, at + size);
    at += size;
  }
}

async function blocksOf(text: string, sizes: number[]): Promise<LineBlock[]> {
  const out: LineBlock[] = [];
  for await (const block of readLineBlocks(reads(Buffer.from(text), sizes))) out.push(block);
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
});
