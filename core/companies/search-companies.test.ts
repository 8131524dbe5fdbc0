import { describe, expect, it } from 'vitest';
import { classifyQuery } from './search-companies.js';

describe('classifyQuery', () => {
  it('when the query is 11 digits, with or without IT and spaces, then it is an exact identifier', () => {
    expect(classifyQuery('01234567890')).toEqual({ kind: 'identifier', code: '01234567890' });
    expect(classifyQuery('it 01234567890')).toEqual({ kind: 'identifier', code: '01234567890' });
  });

  it('when the query is a 16-character codice fiscale then it is an identifier, but a 16-letter word is a name', () => {
    expect(classifyQuery('rssmra80a01h501u')).toEqual({ kind: 'identifier', code: 'RSSMRA80A01H501U' });
    expect(classifyQuery('costruzionirossi')).toEqual({ kind: 'name', text: 'costruzionirossi' });
  });

  it('when the query is a name then its spaces are collapsed, and no query means filters only', () => {
    expect(classifyQuery('Rossi   Costruzioni')).toEqual({ kind: 'name', text: 'Rossi Costruzioni' });
    expect(classifyQuery(undefined)).toEqual({ kind: 'none' });
  });
});
