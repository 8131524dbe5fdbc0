import { describe, expect, it } from 'vitest';
import { pageWindow } from './page-window.js';

describe('which rows a numbered page holds', () => {
  it('when the page asked is past the end, however far, then it is the last page; when it is not a number, the first', () => {
    expect(pageWindow(87, 2, 50)).toEqual({ page: 2, pages: 2, offset: 50 });
    for (const far of [3, 1e20, Number.POSITIVE_INFINITY]) expect(pageWindow(87, far, 50).page, String(far)).toBe(2);
    for (const none of [undefined, Number.NaN, 0, -4]) expect(pageWindow(87, none, 50).page, String(none)).toBe(1);
    expect(pageWindow(0, 5, 50)).toEqual({ page: 1, pages: 1, offset: 0 });
  });
});
