import { describe, expect, it } from 'vitest';
import { codiceFiscaleCheckChar, isValidCodiceFiscale } from '../companies/italian-identifiers.js';
import { makeCodiceFiscale } from './codice-fiscale.js';

describe('codice fiscale', () => {
  it('when computed for the published examples then the codes match character for character', () => {
    // The Agenzia delle Entrate's textbook example and the Wikipedia (it) example.
    expect(makeCodiceFiscale({ surname: 'Rossi', name: 'Mario', sex: 'M', birthYear: 1985, birthMonth: 12, birthDay: 10, belfiore: 'A562' })).toBe('RSSMRA85T10A562S');
    expect(makeCodiceFiscale({ surname: 'Moretti', name: 'Matteo', sex: 'M', birthYear: 1925, birthMonth: 4, birthDay: 9, belfiore: 'F205' })).toBe('MRTMTT25D09F205Z');
  });

  it('when the name has four consonants, the person is a woman, or names are short then the rules apply', () => {
    // Gianfranco: consonants G N F R N C -> 1st, 3rd, 4th = G F R. Women: day + 40.
    const cf = makeCodiceFiscale({ surname: "D'Angelo", name: 'Gianfranco', sex: 'M', birthYear: 2001, birthMonth: 1, birthDay: 5, belfiore: 'H501' });
    expect(cf.slice(0, 6)).toBe('DNGGFR');
    expect(cf.slice(6, 11)).toBe('01A05');
    const woman = makeCodiceFiscale({ surname: 'Fo', name: 'Ea', sex: 'F', birthYear: 1970, birthMonth: 6, birthDay: 3, belfiore: 'F205' });
    expect(woman.slice(0, 11)).toBe('FOXEAX70H43');
    expect(isValidCodiceFiscale(cf) && isValidCodiceFiscale(woman)).toBe(true);
  });

  it('when omocodia applies then digits become letters from the right and the code still validates', () => {
    const base = { surname: 'Rossi', name: 'Mario', sex: 'M' as const, birthYear: 1985, birthMonth: 12, birthDay: 10, belfiore: 'A562' };
    const first = makeCodiceFiscale(base, 1);
    expect(first.slice(0, 14)).toBe('RSSMRA85T10A56');
    expect(first[14]).toBe('N'); // 2 -> N
    expect(isValidCodiceFiscale(first)).toBe(true);
    expect(isValidCodiceFiscale(makeCodiceFiscale(base, 7))).toBe(true);
  });

  it('when the check character or the shape is wrong then the code is invalid', () => {
    expect(isValidCodiceFiscale('RSSMRA85T10A562T')).toBe(false);
    expect(isValidCodiceFiscale('RSSMRA85Z10A562S')).toBe(false);
    expect(codiceFiscaleCheckChar('RSSMRA85T10A562')).toBe('S');
  });
});
