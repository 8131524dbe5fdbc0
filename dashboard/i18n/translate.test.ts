import { describe, expect, it } from 'vitest';
import { formats } from './translate.js';

describe('numbers on the pages', () => {
  it('when a number has four digits then it is grouped in both languages, as the larger ones next to it are', () => {
    expect([formats('it').number(1013), formats('it').number(100_000)]).toEqual(['1.013', '100.000']);
    expect([formats('en').number(1013), formats('en').number(100_000)]).toEqual(['1,013', '100,000']);
  });
});
