import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { criteriaFingerprint, decodeCursor, encodeCursor } from './search-cursor.js';

describe('search cursors', () => {
  const fingerprint = criteriaFingerprint({ query: 'rossi' });
  const position = { score: '0.8125', name: 'ROSSI SRL', id: '42' };

  it('when a cursor is decoded with its own criteria then the position comes back exactly', () => {
    expect(decodeCursor(encodeCursor(position, fingerprint), fingerprint)).toEqual(position);
  });

  it('when a cursor is replayed with other criteria or tampered with then invalid_params names the cursor', () => {
    const cursor = encodeCursor(position, fingerprint);
    for (const [c, f] of [[cursor, criteriaFingerprint({ query: 'bianchi' })], ['not-a-cursor', fingerprint], [Buffer.from('{"v":1,"s":"1; DROP"}').toString('base64url'), fingerprint]] as const) {
      const err = (() => { try { decodeCursor(c, f); } catch (e) { return e; } })();
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'invalid_params', details: [{ path: 'cursor' }] });
    }
  });
});
