import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../billing/plans/manage-organizations.js';
import { createDb, type Db } from '../db/index.js';
import { ledgerPage } from './ledger-page.js';

const databaseUrl = inject('databaseUrl');
let db: Db;

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
});
afterAll(async () => {
  await db.destroy();
});

/** A new organization's ledger: `rows` as [period, ISO time, entry type], inserted in order. */
async function ledgerOf(rows: [string, string, string][]): Promise<{ org: string; eventIds: string[] }> {
  const org = await createOrganization(db, { name: `Ledger page ${randomUUID()} SRL`, planId: null });
  const eventIds = rows.map(() => `evt_${randomUUID()}`);
  await db('usage_ledger').insert(
    rows.map(([period, at, type], i) => ({ event_id: eventIds[i], organization_id: org.id, entry_type: type, source: type === 'usage' ? 'api' : 'admin', quantity: 1, unit: 'credits', credits_delta: type === 'usage' ? -1 : 100, period, occurred_at: at })),
  );
  return { org: org.id, eventIds };
}

describe('ledger page', () => {
  it('when a ledger spans months then pages run newest first, by month, then time, then row', async () => {
    const { org, eventIds } = await ledgerOf([
      ['2026-10', '2026-10-31T23:00:00Z', 'usage'],
      ['2026-11', '2026-11-02T09:00:00Z', 'usage'],
      ['2026-11', '2026-11-02T09:00:00Z', 'usage'], // same time: the later row first
      ['2026-11', '2026-11-01T00:00:00Z', 'grant'],
      // An adjustment booked to October's allowance after November began (a stale period):
      // it is October's row, listed with October.
      ['2026-10', '2026-11-03T10:00:00Z', 'adjustment'],
    ]);
    const first = await ledgerPage(db, org, { pageSize: 2 });
    expect(first).toMatchObject({ page: 1, pages: 3, total: 5, more: false });
    const all = [...first.rows, ...(await ledgerPage(db, org, { pageSize: 2, page: 2 })).rows, ...(await ledgerPage(db, org, { pageSize: 2, page: 3 })).rows];
    expect(all.map((r) => r.eventId)).toEqual([eventIds[2], eventIds[1], eventIds[3], eventIds[4], eventIds[0]]);
    expect((await ledgerPage(db, org, { type: 'grant' })).rows.map((r) => r.eventId)).toEqual([eventIds[3]]);
    expect((await ledgerPage(db, org, { period: '2026-10' })).rows.map((r) => r.eventId)).toEqual([eventIds[4], eventIds[0]]);
  });

  it('when more rows match than the count cap then the total is the cap, marked as more, and the pages past it still open', async () => {
    const { org } = await ledgerOf(Array.from({ length: 7 }, (_, i): [string, string, string] => ['2026-11', `2026-11-0${i + 1}T00:00:00Z`, 'usage']));
    const capped = await ledgerPage(db, org, { pageSize: 2, countCap: 5 });
    expect(capped).toMatchObject({ total: 5, more: true, pages: 3 });
    expect((await ledgerPage(db, org, { pageSize: 2, countCap: 5, page: 3 })).rows).toHaveLength(2);
    expect(await ledgerPage(db, org, { pageSize: 2, countCap: 7 })).toMatchObject({ total: 7, more: false, pages: 4 });
  });
});
