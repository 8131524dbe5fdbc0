import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../db/index.js';
import { createLogger } from '../logging/index.js';
import { createDatabase, dropDatabase, uniqueDatabaseName } from '../../test/services/databases.js';
import { ensureSampleData } from './ensure-sample-data.js';
import { pickSampleFiscalCodes } from './pick-sample-fiscal-codes.js';

// ensureSampleData acts only on an EMPTY store, so it gets a scratch database of its own.
const server = inject('databaseUrl');
const name = uniqueDatabaseName('sample_data');
let db: Db;

beforeAll(async () => {
  db = createDb({ connectionString: await createDatabase(server, name), poolMax: 4 });
  await migrateLatest(db);
});
afterAll(async () => {
  await db?.destroy();
  await dropDatabase(server, name);
});

describe('ensureSampleData', () => {
  it('when the store is empty then it loads the companies once, and the codes it suggests exist and mix kinds', async () => {
    const logger = createLogger({ level: 'silent' });
    const first = await ensureSampleData({ db, count: 300, seed: 81_300_001, logger });
    expect(first.loaded).toBe(true);
    expect(first.summary).toMatchObject({ created: 300, rejected: 0 });

    const second = await ensureSampleData({ db, count: 300, seed: 81_300_001, logger });
    expect(second).toEqual({ loaded: false, summary: null });

    const codes = await pickSampleFiscalCodes(db);
    expect(codes.length).toBeGreaterThanOrEqual(20);
    expect(new Set(codes).size).toBe(codes.length);
    const { rows } = await db.raw<{ rows: { fiscal_code: string; size: string | null }[] }>('SELECT fiscal_code, size FROM companies WHERE fiscal_code = ANY(?)', [codes]);
    expect(rows).toHaveLength(codes.length);
    expect(codes.some((c) => c.length === 16)).toBe(true);
    expect(codes.some((c) => c.length === 11)).toBe(true);
    expect(rows.some((r) => r.size === 'large')).toBe(true);
    expect(rows.some((r) => r.size === 'micro' || r.size === 'small')).toBe(true);
  });
});
