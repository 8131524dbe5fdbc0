import { describe, expect, it } from 'vitest';
import { surnameVariantPatterns } from './surname-forms.js';

describe('surnameVariantPatterns', () => {
  it('when one word begins as an elision or a particle does then its other forms are looked up, the apostrophe or space as any one character', () => {
    // Which is the surname's beginning cannot be told: each form is looked up (in one scan).
    expect(surnameVariantPatterns('Damico')).toEqual(['%D_amico%', '%Da_mico%']);
    expect(surnameVariantPatterns('dellorto')).toEqual(['%dell_orto%', '%dello_rto%']); // dell + orto, not d + ellorto
    expect(surnameVariantPatterns('Derosa')).toEqual(['%D_erosa%', '%De_rosa%']);
    expect(surnameVariantPatterns('Dellavalle')).toEqual(['%Dell_avalle%', '%Della_valle%']);
  });

  it('when the surname is written with its apostrophe or a space then it is also looked up joined', () => {
    expect(surnameVariantPatterns("D'Amico")).toEqual(['%DAmico%']);
    expect(surnameVariantPatterns('D’Angelo')).toEqual(['%DAngelo%']);
    expect(surnameVariantPatterns('De Rosa')).toEqual(['%DeRosa%']);
    expect(surnameVariantPatterns("Dell'Orto")).toEqual(['%DellOrto%']);
  });

  it('when the name has more words, or no such beginning, or too little after it then there is nothing more to look up', () => {
    expect(surnameVariantPatterns('Mario Damico')).toEqual([]);
    expect(surnameVariantPatterns('Salvatore De Rosa')).toEqual([]);
    expect(surnameVariantPatterns('Rossi')).toEqual([]);
    expect(surnameVariantPatterns('Dmitri')).toEqual([]);
    expect(surnameVariantPatterns("Dall'Ò")).toEqual([]);
    expect(surnameVariantPatterns('Lu')).toEqual([]);
  });

  it('when the surname holds a LIKE wildcard then it is matched as written', () => {
    expect(surnameVariantPatterns('De_Ro%sa')).toEqual([]);
    expect(surnameVariantPatterns("D'Am_ico")).toEqual([]);
  });
});
