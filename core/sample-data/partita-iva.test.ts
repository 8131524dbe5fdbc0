import { describe, expect, it } from 'vitest';
import { isValidPartitaIva, partitaIvaCheckDigit } from '../companies/italian-identifiers.js';
import { makePartitaIva } from './partita-iva.js';

describe('partita IVA check digit', () => {
  it('when given published partite IVA then their check digits are reproduced', () => {
    // Eni S.p.A., Agenzia delle Entrate, Telecom Italia S.p.A.
    for (const code of ['00905811006', '06363391001', '00488410010']) {
      expect(partitaIvaCheckDigit(code.slice(0, 10))).toBe(Number(code[10]));
      expect(isValidPartitaIva(code)).toBe(true);
    }
  });

  it('when one digit is changed then the code is invalid', () => {
    expect(isValidPartitaIva('00905811007')).toBe(false);
    expect(isValidPartitaIva('10905811006')).toBe(false);
    expect(isValidPartitaIva('0090581100')).toBe(false);
    expect(isValidPartitaIva('0090581100A')).toBe(false);
  });

  it('when a code is made from a progressive number and an office then both are in place and it validates', () => {
    const code = makePartitaIva(1234567, 15);
    expect(code.slice(0, 10)).toBe('1234567015');
    expect(isValidPartitaIva(code)).toBe(true);
    expect(() => makePartitaIva(0, 15)).toThrow();
    expect(() => makePartitaIva(1, 1000)).toThrow();
  });
});
