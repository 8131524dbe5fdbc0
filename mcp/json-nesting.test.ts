import { describe, expect, it } from 'vitest';
import { nestsDeeperThan } from './json-nesting.js';

// The pass that keeps deeply nested bodies from JSON.parse: it must count exactly the levels
// JSON.parse would descend, so that no message within the bound is refused and none beyond it
// is parsed, whatever its strings hold.

const deeper = (text: string, limit: number) => nestsDeeperThan(Buffer.from(text, 'utf8'), limit);
const nested = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

describe('nestsDeeperThan', () => {
  it('when arrays and objects nest exactly to the limit then the text passes, and one level more is refused', () => {
    expect(deeper(nested(64), 64)).toBe(false);
    expect(deeper(nested(65), 64)).toBe(true);
    const objects = (levels: number) => `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}`;
    expect(deeper(objects(3), 3)).toBe(false);
    expect(deeper(objects(4), 3)).toBe(true);
    expect(deeper('[{"a":[{}]}]', 4)).toBe(false);
    expect(deeper('[{"a":[{}]}]', 3)).toBe(true);
  });

  it('when siblings follow each other then only the depth counts, not their number', () => {
    expect(deeper(`[${Array.from({ length: 1_000 }, () => '[[1]]').join(',')}]`, 3)).toBe(false);
  });

  it('when brackets stand inside strings then they do not count, whatever the escapes before the closing quote', () => {
    expect(deeper(JSON.stringify({ text: '[[[[[[[[{{{{{{' }), 1)).toBe(false);
    // An escaped quote does not end the string: the brackets after it are still inside it.
    expect(deeper(JSON.stringify({ text: 'say "[[[[[[" twice' }), 1)).toBe(false);
    // An escaped backslash does end before the quote: the brackets after that quote count.
    expect(deeper('["a\\\\",[[[]]]]', 3)).toBe(true);
    expect(deeper('["a\\\\",[[[]]]]', 4)).toBe(false);
    expect(deeper(JSON.stringify(['\\', '\\"[[[[', '"', '[[[[']), 1)).toBe(false);
    // Non-ASCII text is read byte by byte without ever reading a bracket or quote into it.
    expect(deeper(JSON.stringify({ name: 'Società «Ünïcode» 日本 😀 [[[[' }), 1)).toBe(false);
  });

  it('when the text is not JSON then it is left to JSON.parse, which stops at the first byte that closes more than was opened, before what nests after it', () => {
    expect(deeper('{not json', 1)).toBe(false);
    expect(deeper('"unterminated [[[[', 1)).toBe(false);
    expect(deeper(`]]]]${nested(6)}`, 4)).toBe(false);
    expect(() => JSON.parse(`]]]]${nested(6)}`)).toThrow(SyntaxError);
  });
});
