import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../../db/index.js';
import { createLogger } from '../../logging/index.js';
import { generateDossiers } from '../../sample-data/index.js';
import { fiscalCodes } from '../../../test/support/company-dossiers.js';
import { createCompanyStore, type CompanyStore } from '../company-store.js';
import { upsertPreparedCompanies } from '../write-companies.js';
import { importDossiers, type UpsertFn } from './import-dossiers.js';
import { MAX_LINE_BYTES } from './line-blocks.js';
import { readLineBlocks } from './line-blocks.js';
import { inReads } from '../../../test/support/byte-reads.js';

// Lines that used to get past the parser: a file with no "\n" (gathered whole, then decoded,
// until memory or V8's string length ran out) and a text holding half an emoji (refused by
// Postgres for the whole batch, naming no field). Through the importer, into Postgres.

const CR_ONLY_SEED = 81_210_001;
const HINT = '(CR-only line ends, or a JSON array instead of one object per line?)';

let db: Db;
let store: CompanyStore;
beforeAll(() => {
  db = createDb({ connectionString: inject('databaseUrl'), poolMax: 4 });
  store = createCompanyStore({ db, queryTimeoutMs: 15_000, logger: createLogger({ level: 'silent' }) });
});
afterAll(async () => {
  await db?.destroy();
});

// Counts the batches written, to tell a batch written once from one retried company by company.
function countingUpsert(): { upsert: UpsertFn; calls: number[] } {
  const calls: number[] = [];
  return { calls, upsert: (database, companies) => { calls.push(companies.length); return upsertPreparedCompanies(database, companies); } };
}

describe('importing runaway lines', () => {
  it.each([0, 2])('when a file has CR-only line ends (parser threads: %i) then it is refused as one line with no line break, and a line after a "\\n" still lands with its number', async (workers) => {
    const dossiers = [...generateDossiers({ count: 1_100, seed: CR_ONLY_SEED + workers })];
    const crOnly = Buffer.from(dossiers.map((d) => JSON.stringify(d)).join('\r'));
    expect(crOnly.length).toBeGreaterThan(MAX_LINE_BYTES);
    const later = { fiscalCode: fiscalCodes()(), legalName: 'Dopo il file CR S.r.l.' };

    const whole = await importDossiers({ db, blocks: readLineBlocks(inReads(crOnly, 1 << 20)), batchSize: 100, workers });
    expect(whole).toMatchObject({ lines: 1, accepted: 0, rejected: 1, created: 0 });
    expect(whole.rejections).toEqual([{
      line: 1, fiscalCode: null,
      reason: `line too long: no line break in ${crOnly.length} bytes to the end of the input, at most 4194304 characters for one company ${HINT}`,
    }]);

    const rejected: Buffer[] = [];
    const bytesDone: number[] = [];
    const input = Buffer.concat([crOnly, Buffer.from(`\n\n${JSON.stringify(later)}\n`)]);
    const summary = await importDossiers({
      db, blocks: readLineBlocks(inReads(input, 1 << 20)), batchSize: 100, workers,
      onReject: (_r, line) => rejected.push(Buffer.from(line)), onProgress: (p) => bytesDone.push(p.bytesDone),
    });
    expect(summary).toMatchObject({ lines: 2, rejected: 1, created: 1, parserThreads: workers });
    // The progress bar ends at 100%: the line not kept counts its own bytes, not its stand-in's.
    expect(bytesDone.at(-1)).toBe(input.length);
    expect(summary.rejections).toEqual([{ line: 1, fiscalCode: null, reason: `line too long: ${crOnly.length} bytes, at most 4194304 characters for one company ${HINT}` }]);
    // What a rejects file gets: a note in the line's place, not 14 MB.
    expect(rejected.map((line) => line.toString())).toEqual([`[line too long, not kept: ${crOnly.length} bytes]\n`]);
    expect((await store.companyReport(later.fiscalCode))?.identity.legalName).toBe(later.legalName);
    expect(await store.companyReport(dossiers[0]!.fiscalCode)).toBeNull();
  });

  it.each([0, 2])('when lines hold half an emoji (parser threads: %i) then each is rejected naming its fields, and the batch around them is written once', async (workers) => {
    const next = fiscalCodes();
    const good = Array.from({ length: 4 }, (_, i) => ({ fiscalCode: next(), legalName: `Buona ${i} S.r.l. 😀` }));
    const cut = {
      fiscalCode: next(), legalName: 'Gelati \ud83d S.r.l.',
      shareholders: [{ name: 'Anna Neri', share: 1 }], officers: [{ name: 'Luca \ude00 Blu', roleCategory: 'director' }],
      branches: [{ legalName: 'Negozio', address: { line1: 'Via \ud83d 1', countryCode: 'IT' } }],
    };
    const lines = [good[0], good[1], cut, good[2], good[3]].map((d) => JSON.stringify(d)).join('\n');
    expect(lines).toContain('"Gelati \\ud83d S.r.l."'); // as a producer's file holds it: an escape
    const { upsert, calls } = countingUpsert();

    const summary = await importDossiers({ db, blocks: readLineBlocks(inReads(Buffer.from(lines), 100)), batchSize: 500, workers, upsert });
    const message = (escape: string) => `holds an unpaired UTF-16 surrogate (${escape}): the text was cut inside a character; fix or remove it`;
    expect(summary.rejections).toEqual([{
      line: 3, fiscalCode: cut.fiscalCode,
      reason: `legalName: ${message('\\ud83d')}; officers[0].name: ${message('\\ude00')}; branches[0].address.line1: ${message('\\ud83d')}`,
    }]);
    expect(summary).toMatchObject({ lines: 5, rejected: 1, created: 4 });
    expect(calls).toEqual([4]);
    for (const d of good) expect((await store.companyReport(d.fiscalCode))?.identity.legalName).toBe(d.legalName);
    expect(await store.companyReport(cut.fiscalCode)).toBeNull();
  });
});
