import { describe, expect, it } from 'vitest';
import { AppError } from '../errors/index.js';
import { criteriaFingerprint, decodeCursor, encodeCursor } from './search-cursor.js';

describe('search cursors', () => {
  const fingerprint = criteriaFingerprint({ query: 'rossi' });
  const position = { score: '0.8125', name: 'ROSSI SRL', id: '42' };

  it('when a cursor is decoded with its own criteria then the position comes back exactly', () => {
    expect(decodeCursor(encodeCursor(position, fingerprint), fingerprint, { companyId: true })).toEqual(position);
    const person = { score: '0.5', name: 'MARIO ROSSI', id: '' };
    expect(decodeCursor(encodeCursor(person, fingerprint), fingerprint, { companyId: false })).toEqual(person);
    // A company name search's cursor also carries the whole name's closeness.
    const named = { ...position, closeness: '0.4615' };
    expect(decodeCursor(encodeCursor(named, fingerprint), fingerprint, { companyId: true })).toEqual(named);
    // And, once a page said truncated, that it did.
    const truncated = { ...named, truncated: true };
    expect(decodeCursor(encodeCursor(truncated, fingerprint), fingerprint, { companyId: true })).toEqual(truncated);
  });

  it('when a cursor is replayed with other criteria or tampered with then invalid_params names the cursor', () => {
    const cursor = encodeCursor(position, fingerprint);
    for (const [c, f] of [[cursor, criteriaFingerprint({ query: 'bianchi' })], ['not-a-cursor', fingerprint], [Buffer.from('{"v":1,"s":"1; DROP"}').toString('base64url'), fingerprint]] as const) {
      const err = (() => { try { decodeCursor(c, f, { companyId: true }); } catch (e) { return e; } })();
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'invalid_params', details: [{ path: 'cursor' }] });
    }
  });

  it('when a character is added to a cursor, whatever its length, then it is refused as altered (Node\'s decoder would drop a dangling one and read the same bytes)', () => {
    // Names of four lengths in a row give cursors of every length modulo 4.
    for (const name of ['ROSSI SRL', 'ROSSI SRLX', 'ROSSI SRLXY', 'ROSSI SRLXYZ']) {
      const cursor = encodeCursor({ ...position, name }, fingerprint);
      expect(decodeCursor(cursor, fingerprint, { companyId: true }).name).toBe(name);
      for (const altered of [`${cursor}x`, `${cursor}=`, `${cursor} `, `${cursor}.`]) {
        expect(() => decodeCursor(altered, fingerprint, { companyId: true }), altered).toThrowError('The cursor is not one this service returned: pass nextCursor exactly as received.');
      }
    }
  });

  it('when a cursor of the other search tool is passed then the message says it belongs to another search, not that it was never returned', () => {
    // A people search's cursor (no id) handed to the company search, and the other way round.
    const people = encodeCursor({ score: '0.5', name: 'MARIO ROSSI', id: '' }, criteriaFingerprint({ name: 'rossi' }));
    const companies = encodeCursor(position, fingerprint);
    for (const [cursor, companyId] of [[people, true], [companies, false]] as const) {
      expect(() => decodeCursor(cursor, criteriaFingerprint({ query: 'rossi', other: companyId }), { companyId })).toThrow(
        expect.objectContaining({
          code: 'invalid_params',
          message: expect.stringMatching(/^The cursor belongs to another search: /),
          details: [{ path: 'cursor', message: 'made by a search with other criteria, by the other search tool, or before the service changed how it ranks names' }],
        }),
      );
    }
  });

  it('when a cursor is refused then its detail says what is wrong with it, not the message\'s sentence again', () => {
    const cursor = encodeCursor(position, fingerprint);
    for (const [c, f] of [[cursor, criteriaFingerprint({ query: 'bianchi' })], ['not-a-cursor', fingerprint], [encodeCursor({ ...position, id: 'abc' }, fingerprint), fingerprint]] as const) {
      const err = (() => { try { decodeCursor(c, f, { companyId: true }); } catch (e) { return e; } })() as AppError;
      expect(err.details).toHaveLength(1);
      expect(err.details![0]!.message).not.toBe(err.message);
      expect(err.message).not.toContain(err.details![0]!.message);
    }
  });

  it('when a field of a well-encoded cursor is not what the query binds (an id past a bigint, no id, a NUL in the name, a huge score) then invalid_params names the cursor, before any query', () => {
    const tampered = [
      { ...position, id: '99999999999999999999' },
      { ...position, id: '' },
      { ...position, id: 'abc' },
      { ...position, name: 'ROSSI\u0000' },
      { ...position, score: '1'.repeat(40) },
      { ...position, closeness: 'high' },
      { ...position, closeness: '1'.repeat(40) },
    ];
    for (const p of tampered) {
      expect(() => decodeCursor(encodeCursor(p, fingerprint), fingerprint, { companyId: true }), JSON.stringify(p)).toThrow(expect.objectContaining({ code: 'invalid_params', details: [expect.objectContaining({ path: 'cursor' })] }));
    }
    // A truncated mark other than the one encodeCursor writes.
    const marked = Buffer.from(JSON.stringify({ v: 1, f: fingerprint, s: position.score, n: position.name, i: position.id, t: 'yes' })).toString('base64url');
    expect(() => decodeCursor(marked, fingerprint, { companyId: true })).toThrow(expect.objectContaining({ code: 'invalid_params' }));
    // A people cursor carries no id: one with an id is not ours.
    expect(() => decodeCursor(encodeCursor(position, fingerprint), fingerprint, { companyId: false })).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  });
});
