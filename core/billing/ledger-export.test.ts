import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createDb, type Db } from '../db/index.js';
import { exportLedger } from './ledger-export.js';
import { createOrganization } from './plans/manage-organizations.js';

// The export reads a month a chunk at a time from one snapshot, so a busy organization's month
// (millions of rows) is never held at once, and rows the worker adds meanwhile do not shift it.
const databaseUrl = inject('databaseUrl');
let db: Db;

beforeAll(async () => {
  // One connection: an export that kept its transaction open would block every later query.
  db = createDb({ connectionString: databaseUrl, poolMax: 1 });
});
afterAll(async () => {
  await db.destroy();
});

const PERIOD = '2026-03';

/** A new organization with `count` usage rows in PERIOD, two to a second, each applied before the calls made earlier (a backlog applied newest first). */
async function organizationWithUsage(count: number): Promise<string> {
  const org = await createOrganization(db, { name: `Ledger export ${randomUUID()} SRL`, planId: null });
  const rows = Array.from({ length: count }, (_, i) => ({
    event_id: `req_${randomUUID()}`,
    organization_id: org.id,
    entry_type: 'usage',
    source: 'api',
    product: 'company-financials',
    quantity: 5,
    unit: 'credits',
    credits_delta: -5,
    period: PERIOD,
    occurred_at: new Date(Date.UTC(2026, 2, 10, 9, 0, Math.floor((count - 1 - i) / 2))),
  }));
  await db('usage_ledger').insert(rows);
  return org.id;
}

const drain = async <T>(rows: AsyncIterable<T>) => {
  const all: T[] = [];
  for await (const row of rows) all.push(row);
  return all;
};

describe('ledger export', () => {
  it('when a month has more rows than a chunk then every row comes once, in the order they were applied, not that of their calls', async () => {
    const org = await organizationWithUsage(11);
    const rows = await drain(exportLedger(db, org, PERIOD, { chunkSize: 3 }));
    expect(rows).toHaveLength(11);
    expect(new Set(rows.map((r) => r.eventId)).size).toBe(11);
    const ids = rows.map((r) => r.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    // Applied newest call first: the calls' times run backwards.
    const times = rows.map((r) => r.occurredAt);
    expect(times).toEqual([...times].sort().reverse());
    expect(times[0]).not.toBe(times.at(-1));
    expect(rows[0]).toMatchObject({ entryType: 'usage', product: 'company-financials', creditsDelta: -5, period: PERIOD });
    expect(await drain(exportLedger(db, org, '2026-04', { chunkSize: 3 }))).toEqual([]);
  });

  it('when a dashboard user made a ledger row then the export names them by e-mail, and a CLI operator as recorded', async () => {
    const org = await organizationWithUsage(1);
    const userId = `usr_${randomUUID().replaceAll('-', '')}`;
    const email = `operator-${randomUUID().slice(0, 8)}@example.com`;
    await db('users').insert({ id: userId, email });
    const admin = (actor: string, credits: number) => ({
      event_id: `top_${randomUUID()}`, organization_id: org, entry_type: 'top_up', source: 'admin', credits_delta: credits, period: PERIOD,
      occurred_at: new Date(Date.UTC(2026, 2, 20)), actor, reason: 'invoice',
    });
    await db('usage_ledger').insert([admin(userId, 100), admin('cli:maria', 200)]);
    const rows = await drain(exportLedger(db, org, PERIOD, { chunkSize: 2 }));
    expect(rows.map((r) => [r.entryType, r.creditsDelta, r.actor])).toEqual([['usage', -5, null], ['top_up', 100, email], ['top_up', 200, 'cli:maria']]);
  });

  it('when rows are added while the export runs then it is the month as it stood when it began', async () => {
    const org = await organizationWithUsage(4);
    // A second pool: the export holds the test's only connection while it runs.
    const writer = createDb({ connectionString: databaseUrl, poolMax: 1 });
    try {
      const seen: string[] = [];
      for await (const row of exportLedger(db, org, PERIOD, { chunkSize: 2 })) {
        if (seen.length === 0) {
          await writer('usage_ledger').insert({ event_id: `req_${randomUUID()}`, organization_id: org, entry_type: 'usage', source: 'api', quantity: 1, unit: 'calls', calls_delta: 1, period: PERIOD, occurred_at: new Date(Date.UTC(2026, 2, 1)) });
        }
        seen.push(row.eventId);
      }
      expect(seen).toHaveLength(4);
      expect(await drain(exportLedger(db, org, PERIOD))).toHaveLength(5);
    } finally {
      await writer.destroy();
    }
  });

  it('when the reader stops early then the export lets its connection go', async () => {
    const org = await organizationWithUsage(6);
    for await (const row of exportLedger(db, org, PERIOD, { chunkSize: 2 })) {
      expect(row.eventId).toMatch(/^req_/);
      break;
    }
    // With a pool of one, this waits forever (until the acquire timeout) if the export's
    // transaction were still open.
    const counted = await db('usage_ledger').where({ organization_id: org }).count<{ n: string }[]>({ n: '*' });
    expect(Number(counted[0]?.n)).toBe(6);
  });

  it('when no month is given then every month comes whole, one after the other, each in its own export\'s order; a type keeps its rows alone', async () => {
    const org = await organizationWithUsage(5);
    // A March row written after April began (a refund of a March charge, say) is March's.
    const row = (period: string, at: Date, entryType: string) => ({
      event_id: `adm_${randomUUID()}`, organization_id: org, entry_type: entryType, source: 'admin', credits_delta: 10, period, occurred_at: at, actor: 'cli:maria', reason: 'x',
    });
    await db('usage_ledger').insert([
      row('2026-04', new Date(Date.UTC(2026, 3, 1, 0, 0, 1)), 'top_up'),
      row(PERIOD, new Date(Date.UTC(2026, 3, 1, 0, 0, 5)), 'adjustment'),
      row('2026-02', new Date(Date.UTC(2026, 1, 2)), 'top_up'),
    ]);
    const ids = (rows: { eventId: string }[]) => rows.map((r) => r.eventId);
    const months = await Promise.all(['2026-02', PERIOD, '2026-04'].map((p) => drain(exportLedger(db, org, p))));
    const all = await drain(exportLedger(db, org, null, { chunkSize: 2 }));
    expect(ids(all)).toEqual(ids(months.flat()));
    expect(all.map((r) => r.period)).toEqual(['2026-02', ...Array(6).fill(PERIOD), '2026-04']);
    expect(all[6]!.entryType).toBe('adjustment');

    const topUps = await drain(exportLedger(db, org, null, { entryType: 'top_up', chunkSize: 1 }));
    expect(ids(topUps)).toEqual(ids(all.filter((r) => r.entryType === 'top_up')));
    expect(topUps).toHaveLength(2);
    expect(ids(await drain(exportLedger(db, org, PERIOD, { entryType: 'usage' })))).toEqual(ids(months[1]!.slice(0, 5)));
    expect(await drain(exportLedger(db, org, PERIOD, { entryType: 'grant' }))).toEqual([]);
  });

  it('when the period is malformed then the call fails at once with invalid_params', () => {
    expect(() => exportLedger(db, 'org_x', '2026-3')).toThrow(expect.objectContaining({ code: 'invalid_params' }));
  });

  it('when the month has not begun then the call fails at once with invalid_params, not an empty month', () => {
    const now = new Date(Date.UTC(2026, 10, 30, 23, 59));
    expect(() => exportLedger(db, 'org_x', '2026-12', { now })).toThrow(expect.objectContaining({ code: 'invalid_params', message: expect.stringContaining('2026-12 has not begun') }));
    expect(() => exportLedger(db, 'org_x', '2026-11', { now })).not.toThrow();
  });
});
