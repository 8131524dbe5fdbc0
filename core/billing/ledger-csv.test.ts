import { describe, expect, it } from 'vitest';
import { ledgerCsvLines } from './ledger-csv.js';
import type { LedgerEntry } from './ledger-export.js';

const entry = (overrides: Partial<LedgerEntry>): LedgerEntry => ({
  id: 1, eventId: 'top_1', entryType: 'top_up', source: 'admin', keyId: null, product: null, quantity: 0, unit: null, creditsDelta: 100, callsDelta: 0,
  creditsBalanceAfter: 100, period: '2026-03', occurredAt: '2026-03-02T10:00:00.000Z', appliedAt: '2026-03-02T10:00:00.000Z', actor: 'cli:maria', reason: 'invoice 7', reference: null,
  ...overrides,
});

async function* rows(...entries: (LedgerEntry | Error)[]): AsyncGenerator<LedgerEntry> {
  for (const e of entries) {
    if (e instanceof Error) throw e;
    yield e;
  }
}

const drain = async (lines: AsyncIterable<string>) => {
  const all: string[] = [];
  for await (const line of lines) all.push(line);
  return all;
};

const HEADER = 'id,eventId,entryType,source,keyId,product,quantity,unit,creditsDelta,callsDelta,creditsBalanceAfter,period,occurredAt,appliedAt,actor,reason,reference';

describe('ledger CSV lines', () => {
  it('when there are rows then the header comes first, then one line each, a formula-like reason guarded and quoting as RFC 4180', async () => {
    expect(await drain(ledgerCsvLines(rows(
      entry({}),
      entry({ id: 2, creditsDelta: -20, reason: '=SUM(A1), "x"' }),
      entry({ id: 3, eventId: 'top_ref_org_1_FT 2026/117', reference: 'FT 2026/117' }),
      entry({ id: 4, eventId: 'top_ref_org_1_=2+2', reference: '=2+2' }),
    )))).toEqual([
      HEADER,
      '1,top_1,top_up,admin,,,0,,100,0,100,2026-03,2026-03-02T10:00:00.000Z,2026-03-02T10:00:00.000Z,cli:maria,invoice 7,',
      `2,top_1,top_up,admin,,,0,,-20,0,100,2026-03,2026-03-02T10:00:00.000Z,2026-03-02T10:00:00.000Z,cli:maria,"'=SUM(A1), ""x""",`,
      '3,top_ref_org_1_FT 2026/117,top_up,admin,,,0,,100,0,100,2026-03,2026-03-02T10:00:00.000Z,2026-03-02T10:00:00.000Z,cli:maria,invoice 7,FT 2026/117',
      "4,top_ref_org_1_=2+2,top_up,admin,,,0,,100,0,100,2026-03,2026-03-02T10:00:00.000Z,2026-03-02T10:00:00.000Z,cli:maria,invoice 7,'=2+2",
    ]);
  });

  it('when the separator is a semicolon then every field is separated by one, and a reason holding one is quoted', async () => {
    expect(await drain(ledgerCsvLines(rows(entry({ reason: 'rettifica; società «Caffè»' })), ';'))).toEqual([
      HEADER.replaceAll(',', ';'),
      `1;top_1;top_up;admin;;;0;;100;0;100;2026-03;2026-03-02T10:00:00.000Z;2026-03-02T10:00:00.000Z;cli:maria;"rettifica; società «Caffè»";`,
    ]);
  });

  it('when there are no rows then the header alone; when the store fails at once then not even that', async () => {
    expect(await drain(ledgerCsvLines(rows()))).toEqual([HEADER]);
    const lines = ledgerCsvLines(rows(new Error('store gone')));
    await expect(lines.next()).rejects.toThrow('store gone');
  });
});
