import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ledgerInOrder } from '../billing/ledger-export.js';
import { createOrganization } from '../billing/plans/manage-organizations.js';
import { createDb, type Db } from '../db/index.js';
import { ledgerPage, ledgerRowsBeyond } from './ledger-page.js';

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
  it('when a ledger spans months then pages run newest first, by month, then in the order applied (the row), whatever the time', async () => {
    const { org, eventIds } = await ledgerOf([
      ['2026-10', '2026-10-31T23:00:00Z', 'usage'],
      ['2026-11', '2026-11-02T09:00:00Z', 'usage'],
      ['2026-11', '2026-11-02T09:00:00Z', 'usage'],
      // Applied after those calls, though dated earlier: listed above them.
      ['2026-11', '2026-11-01T00:00:00Z', 'grant'],
      // An adjustment booked to October's allowance after November began (a stale period):
      // it is October's row, listed with October.
      ['2026-10', '2026-11-03T10:00:00Z', 'adjustment'],
    ]);
    const first = await ledgerPage(db, org, { pageSize: 2 });
    expect(first).toMatchObject({ page: 1, pages: 3, total: 5, more: false });
    const all = [...first.rows, ...(await ledgerPage(db, org, { pageSize: 2, page: 2 })).rows, ...(await ledgerPage(db, org, { pageSize: 2, page: 3 })).rows];
    expect(all.map((r) => r.eventId)).toEqual([eventIds[3], eventIds[2], eventIds[1], eventIds[4], eventIds[0]]);
    expect((await ledgerPage(db, org, { type: 'grant' })).rows.map((r) => r.eventId)).toEqual([eventIds[3]]);
    expect((await ledgerPage(db, org, { period: '2026-10' })).rows.map((r) => r.eventId)).toEqual([eventIds[4], eventIds[0]]);
  });

  it('when a page or an export is read then its order comes from an index, whatever the month and a usage filter: nothing sorts a month of calls', async () => {
    const { org } = await ledgerOf([['2026-11', '2026-11-02T09:00:00Z', 'usage']]);
    const plans: string[] = [];
    for (const period of [null, '2026-11']) {
      for (const entryType of [null, 'usage']) {
        for (const order of ['asc', 'desc'] as const) {
          await db.transaction(async (trx) => {
            // Sorting made a last resort: a plan still sorts only if no index gives the order.
            await trx.raw('SET LOCAL enable_sort = off');
            const query = ledgerInOrder(trx, org, { period, entryType }, order).offset(50).limit(50).select('*').toSQL();
            const { rows } = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(`EXPLAIN ${query.sql}`, query.bindings);
            plans.push(`${period} ${entryType} ${order}:\n${rows.map((r) => r['QUERY PLAN']).join('\n')}`);
          });
        }
      }
    }
    for (const plan of plans) {
      expect(plan).not.toMatch(/Sort/);
      expect(plan).toContain('usage_ledger_org_period_id_idx');
    }
  });

  it('when one organization is most of the ledger then a month of it is still read through its index, not by walking the primary key past every later row', async () => {
    await db.transaction(async (trx) => {
      // A ledger of the session's own, shadowing the real one (pg_temp comes first in the search
      // path): half of it one organization's October and November, then as many rows of others.
      await trx.raw('CREATE TEMP TABLE usage_ledger (LIKE public.usage_ledger INCLUDING ALL) ON COMMIT DROP');
      await trx.raw(`INSERT INTO usage_ledger (event_id, organization_id, entry_type, source, quantity, credits_delta, period, occurred_at)
        SELECT 'e' || g, CASE WHEN g <= 20000 THEN 'org_big' ELSE 'org_' || (g % 20) END, 'usage', 'api', 5, -5,
               CASE WHEN g <= 10000 OR g > 20000 AND g <= 30000 THEN '2026-10' ELSE '2026-11' END, now()
          FROM generate_series(1, 40000) g`);
      await trx.raw('ANALYZE usage_ledger');
      for (const order of ['asc', 'desc'] as const) {
        const query = ledgerInOrder(trx, 'org_big', { period: '2026-10', entryType: null }, order).limit(50).select('*').toSQL();
        const { rows } = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(`EXPLAIN ${query.sql}`, query.bindings);
        const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
        expect(plan, plan).toMatch(/Index Scan (Backward )?using usage_ledger_organization_id_period_id_idx/);
      }
    });
  });

  it('when more rows match than the count cap then the last counted page goes on by row, older and newer, and the oldest page opens: every row, in order, once', async () => {
    const { org, eventIds } = await ledgerOf(Array.from({ length: 7 }, (_, i): [string, string, string] => [i < 3 ? '2026-10' : '2026-11', '2026-11-01T00:00:00Z', 'usage']));
    const newestFirst = [...eventIds].reverse();
    const opts = { pageSize: 2, countCap: 3 };
    // 4 rows counted (the cap and one): two numbered pages, then by row.
    const second = await ledgerPage(db, org, { ...opts, page: 2 });
    expect(second).toMatchObject({ page: 2, pages: 2, more: true });
    const seen = [...(await ledgerPage(db, org, opts)).rows, ...second.rows].map((r) => r.eventId);
    let cursor = second.older;
    while (cursor) {
      const next = await ledgerPage(db, org, { ...opts, older: cursor });
      expect(next.page).toBeNull();
      seen.push(...next.rows.map((r) => r.eventId));
      cursor = next.older;
    }
    expect(seen).toEqual(newestFirst);
    // From the oldest page up by row, the same rows the other way.
    const oldest = await ledgerPage(db, org, { ...opts, oldest: true });
    expect(oldest).toMatchObject({ page: null, older: null });
    const upwards = [oldest.rows.map((r) => r.eventId)];
    cursor = oldest.newer;
    let top = oldest;
    while (cursor) {
      top = await ledgerPage(db, org, { ...opts, newer: cursor });
      upwards.unshift(top.rows.map((r) => r.eventId));
      cursor = top.newer;
    }
    // Ending on the first page, which repeats the row below the one row left above.
    expect(top).toMatchObject({ page: 1 });
    expect(upwards[0]).toEqual(newestFirst.slice(0, 2));
    expect(upwards.flat()).toEqual([newestFirst[0], ...newestFirst.slice(1, 2), ...newestFirst.slice(1)]);
    expect(oldest.rows.map((r) => r.eventId)).toEqual([eventIds[1], eventIds[0]]);
    // Filters hold across the months' boundary; a cursor that is not one is the first page.
    const october = await ledgerPage(db, org, { ...opts, period: '2026-10', older: `2026-10.${oldest.rows[0]!.id}` });
    expect(october.rows.map((r) => r.eventId)).toEqual([eventIds[0]]);
    expect(await ledgerPage(db, org, { ...opts, older: 'nonsense' })).toMatchObject({ page: 1 });
  });

  it('when a page is reached from a row within the count then it is numbered by the rows newer than it, whatever was applied meanwhile; past the count it has no number, and at the top it is the first page', async () => {
    const { org, eventIds } = await ledgerOf(Array.from({ length: 9 }, (): [string, string, string] => ['2026-11', '2026-11-01T00:00:00Z', 'usage']));
    const opts = { pageSize: 2, countCap: 7 };
    const first = await ledgerPage(db, org, opts);
    expect(first).toMatchObject({ page: 1, more: true });
    const meanwhile = `evt_${randomUUID()}`;
    await db('usage_ledger').insert({ event_id: meanwhile, organization_id: org, entry_type: 'usage', source: 'api', quantity: 1, unit: 'credits', credits_delta: -1, period: '2026-11', occurred_at: '2026-11-01T00:00:00Z' });
    const second = await ledgerPage(db, org, { ...opts, older: first.older! });
    expect(second.rows.map((r) => r.eventId)).toEqual([eventIds[6], eventIds[5]]);
    // Three rows above it now (the new one among them): page 2 of 2 a page.
    expect(second).toMatchObject({ page: 2, more: true });
    const third = await ledgerPage(db, org, { ...opts, older: second.older! });
    expect(third).toMatchObject({ page: 3 });
    // Five and seven rows above: within the cap, numbered; nine, past it: by row.
    const fourth = await ledgerPage(db, org, { ...opts, older: third.older! });
    expect(fourth).toMatchObject({ page: 4 });
    expect(await ledgerPage(db, org, { ...opts, older: fourth.older! })).toMatchObject({ page: null });
    // Back up by row: numbered again; the top, reached by row, is the first page, which holds
    // the rows newer than the cursor (not a page of those alone, short of a page's rows).
    expect(await ledgerPage(db, org, { ...opts, newer: fourth.newer! })).toMatchObject({ page: 3 });
    expect(await ledgerPage(db, org, { ...opts, newer: third.newer! })).toMatchObject({ page: 2 });
    const top = await ledgerPage(db, org, { ...opts, newer: `2026-11.${first.rows[0]!.id}` });
    expect(top.rows.map((r) => r.eventId)).toEqual([meanwhile, eventIds[8]]);
    expect(top).toMatchObject({ page: 1, newer: null });
  });

  it('when a page starts from a row then the index finds the row: nothing sorts or counts up to it', async () => {
    const { org } = await ledgerOf([['2026-11', '2026-11-02T09:00:00Z', 'usage']]);
    for (const period of [null, '2026-11']) {
      for (const entryType of [null, 'usage']) {
        for (const direction of ['older', 'newer'] as const) {
          await db.transaction(async (trx) => {
            await trx.raw('SET LOCAL enable_sort = off');
            const query = ledgerRowsBeyond(trx, org, { period, entryType }, { period: '2026-11', id: '123' }, direction).limit(51).select('*').toSQL();
            const { rows } = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(`EXPLAIN ${query.sql}`, query.bindings);
            const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
            expect(plan, plan).not.toMatch(/Sort/);
            expect(plan, plan).toMatch(/Index Cond: .*ROW\(period, id\)/);
          });
        }
      }
    }
  });

  it('when more rows match than the count cap then the total is the cap, marked as more, and the pages past it still open', async () => {
    const { org } = await ledgerOf(Array.from({ length: 7 }, (_, i): [string, string, string] => ['2026-11', `2026-11-0${i + 1}T00:00:00Z`, 'usage']));
    const capped = await ledgerPage(db, org, { pageSize: 2, countCap: 5 });
    expect(capped).toMatchObject({ total: 5, more: true, pages: 3 });
    expect((await ledgerPage(db, org, { pageSize: 2, countCap: 5, page: 3 })).rows).toHaveLength(2);
    expect(await ledgerPage(db, org, { pageSize: 2, countCap: 7 })).toMatchObject({ total: 7, more: false, pages: 4 });
  });
});
