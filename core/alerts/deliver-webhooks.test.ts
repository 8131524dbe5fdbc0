import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createOrganization } from '../billing/plans/manage-organizations.js';
import { createDb, type Db } from '../db/index.js';
import { deliveriesPage } from './deliver-webhooks.js';

const databaseUrl = inject('databaseUrl');
let db: Db;

beforeAll(async () => {
  db = createDb({ connectionString: databaseUrl, poolMax: 2 });
});
afterAll(async () => {
  await db.destroy();
});

describe('the delivery log', () => {
  it('when a page of the log is read then its rows and its count come from the organization\'s index: nothing scans the table or sorts', async () => {
    const org = await createOrganization(db, { name: `Delivery log ${randomUUID()} SRL`, planId: null });
    await db('webhook_deliveries').insert(Array.from({ length: 5 }, (_, i) => ({
      id: `whd_plan_${randomUUID()}`, organization_id: org.id, event_type: 'alert.threshold_crossed', payload: {}, status: 'delivered', attempts: 1,
      created_at: new Date(Date.UTC(2026, 10, 1, 0, i)),
    })));
    // The queries the alerts page runs, as it runs them: a later page, so the offset is there too.
    const queries: { sql: string; bindings: readonly Knex.RawBinding[] }[] = [];
    const note = (q: { sql: string; bindings?: readonly Knex.RawBinding[] }) => queries.push({ sql: q.sql, bindings: q.bindings ?? [] });
    db.on('query', note);
    try {
      expect((await deliveriesPage(db, org.id, { page: 2, pageSize: 2 })).rows).toHaveLength(2);
    } finally {
      db.off('query', note);
    }
    expect(queries).toHaveLength(2);
    const plans: string[] = [];
    for (const query of queries) {
      await db.transaction(async (trx) => {
        // A scan of the table and a sort made last resorts: on a table this small the planner
        // would rightly prefer them, while the plan must show the index can serve the query.
        await trx.raw('SET LOCAL enable_seqscan = off');
        await trx.raw('SET LOCAL enable_sort = off');
        // As the driver got it ($1, $2 … in order): knex.raw takes ? for each.
        const { rows } = await trx.raw<{ rows: { 'QUERY PLAN': string }[] }>(`EXPLAIN ${query.sql.replace(/\$\d+/g, '?')}`, query.bindings);
        plans.push(rows.map((r) => r['QUERY PLAN']).join('\n'));
      });
    }
    const [count, page] = plans as [string, string];
    expect(count, count).toMatch(/(Index Only Scan|Index Scan|Bitmap Index Scan) using webhook_deliveries_organization_created_idx/);
    expect(page, page).toMatch(/Index Scan Backward using webhook_deliveries_organization_created_idx/);
    for (const plan of plans) expect(plan, plan).not.toMatch(/Seq Scan|Sort/);
  });
});
