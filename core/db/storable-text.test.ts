import { describe, expect, it } from 'vitest';
import { holdsControlCharacter } from './storable-text.js';

describe('holdsControlCharacter', () => {
  it('when a one-line text holds a line break, an escape or an invisible direction override then it is refused, and accents, emoji and scripts are not', () => {
    for (const text of ['a\nb', 'tab\there', 'esc \u001b[2J', 'c1 \u0085', 'Über-Schlüssel \u202eevil', 'embed \u202a', 'isolate \u2067x\u2069']) {
      expect(holdsControlCharacter(text), JSON.stringify(text)).toBe(true);
    }
    for (const text of ['Über-Schlüssel ✓ «ital» 日本', 'Caffè 😀', 'שלום', 'مرحبا', 'L\'Aquila S.r.l.']) {
      expect(holdsControlCharacter(text), text).toBe(false);
    }
  });
});
