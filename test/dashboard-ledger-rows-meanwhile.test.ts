import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// The ledger page of an organization whose calls go on while finance reads it, over the real
// dashboard and Postgres: a row applied between page 1 and page 2 (a call, at the head of the
// ledger) must not push page 1's last row onto page 2.

const env = dashboardForFile();
const MONTH = '2026-10';

type Client = Awaited<ReturnType<typeof adminOfNewOrg>>['client'];

async function open(client: Client, path: string) {
  const res = await client.get(path);
  expect(res.status, path).toBe(200);
  return res.text();
}

/** The products of the ledger table's rows, top to bottom (each call of the test has its own). */
const listed = (body: string, tag: string) => [...(/id="ledger-table"[\s\S]*?<\/tbody>/.exec(body)?.[0] ?? '').matchAll(new RegExp(`<code>(${tag}-\\d+)</code>`, 'g'))].map((m) => m[1]!);
const linkOf = (body: string, rel: 'prev' | 'next') => new RegExp(`<a [^>]*rel="${rel}" href="([^"]*)"`).exec(/id="ledger-table"[\s\S]*/.exec(body)?.[0] ?? '')?.[1]?.replaceAll('&amp;', '&') ?? null;

/** A usage row of the month, applied now (the ledger's id gives its order), for product `product`. */
const call = (orgId: string, product: string, balance: number) => ({
  event_id: `evt_${randomUUID()}`, organization_id: orgId, entry_type: 'usage', source: 'api', product, quantity: 1, unit: 'credits',
  credits_delta: -1, credits_balance_after: balance, period: MONTH, occurred_at: new Date('2026-10-02T00:00:00Z'),
});

describe('when a call is applied while finance goes from the first page of the ledger to the next', () => {
  it('then the next page goes on from the last row finance saw, the month and type kept: none listed twice, none skipped', async () => {
    const { orgId, client } = await adminOfNewOrg(env, `Ledger rows meanwhile ${randomUUID()} SRL`);
    const tag = `p${randomUUID().slice(0, 8)}`;
    // The month's opening grant (left out by the type), 60 calls, and a call of the month before (left out by the month).
    await env.db('usage_ledger').insert({
      event_id: `grt_${randomUUID()}`, organization_id: orgId, entry_type: 'grant', source: 'system', credits_delta: 1_000,
      credits_balance_after: 1_000, period: MONTH, occurred_at: new Date('2026-10-01T00:00:00Z'), reason: 'opening grant',
    });
    for (let i = 1; i <= 60; i++) await env.db('usage_ledger').insert(call(orgId, `${tag}-${String(i).padStart(3, '0')}`, 1_000 - i));
    await env.db('usage_ledger').insert({ ...call(orgId, `${tag}-000`, 0), period: '2026-09' });
    const newestFirst = Array.from({ length: 60 }, (_, i) => `${tag}-${String(60 - i).padStart(3, '0')}`);

    const filtered = `period=${MONTH}&type=usage`;
    const first = await open(client, `/orgs/${orgId}/ledger?${filtered}`);
    expect(listed(first, tag)).toEqual(newestFirst.slice(0, 50));
    expect(first).toContain('Page 1 of 2 · 60 rows');
    const newest = `${tag}-999`;
    await env.db('usage_ledger').insert(call(orgId, newest, 939));

    const next = linkOf(first, 'next');
    const second = await open(client, next!);
    expect(listed(second, tag)).toEqual(newestFirst.slice(50));
    expect(next).toMatch(new RegExp(`^/orgs/${orgId}/ledger\\?${filtered}&older=${MONTH}\\.\\d+$`));
    expect(second).toContain('Page 2 of 2 · 61 rows');
    expect(second).not.toContain('opening grant');
    expect(linkOf(second, 'next')).toBeNull();
    // Previous, from the page's first row, the month and type still kept: the 50 rows above it
    // (the new call is one more above them, so not yet the first page), then the first page, the
    // new call at its top.
    const previous = linkOf(second, 'prev');
    expect(previous).toMatch(new RegExp(`^/orgs/${orgId}/ledger\\?${filtered}&newer=${MONTH}\\.\\d+$`));
    const above = await open(client, previous!);
    expect(listed(above, tag)).toEqual(newestFirst.slice(0, 50));
    expect(above).toContain('Page 2 of 3 · 61 rows');
    const back = await open(client, linkOf(above, 'prev')!);
    expect(listed(back, tag)).toEqual([newest, ...newestFirst.slice(0, 49)]);
    expect(back).toContain('Page 1 of 2 · 61 rows');
    expect(linkOf(back, 'prev')).toBeNull();

    // A cursor that is not one: the first page.
    for (const bad of ['older=junk', `older=${MONTH}.1%27%20OR%201=1`, 'newer=1.2.3', 'older=']) {
      const body = await open(client, `/orgs/${orgId}/ledger?${filtered}&${bad}`);
      expect(listed(body, tag), bad).toEqual([newest, ...newestFirst.slice(0, 49)]);
      expect(body, bad).toContain('Page 1 of 2 · 61 rows');
    }
    // A numbered page asked for directly is still read by number.
    expect(listed(await open(client, `/orgs/${orgId}/ledger?${filtered}&page=2`), tag)).toEqual(newestFirst.slice(49));
  });
});

describe('when more than a page of calls is applied while finance reads the last page of the ledger', () => {
  it('then Previous climbs back by row through every row written meanwhile and ends at the first page: none skipped', async () => {
    const { orgId, client } = await adminOfNewOrg(env, `Ledger rows meanwhile ${randomUUID()} SRL`);
    const tag = `q${randomUUID().slice(0, 8)}`;
    const product = (i: number) => `${tag}-${String(i).padStart(3, '0')}`;
    for (let i = 1; i <= 60; i++) await env.db('usage_ledger').insert(call(orgId, product(i), 1_000 - i));
    const filtered = `period=${MONTH}&type=usage`;
    const first = await open(client, `/orgs/${orgId}/ledger?${filtered}`);
    const second = await open(client, linkOf(first, 'next')!);
    expect(listed(second, tag)).toEqual(Array.from({ length: 10 }, (_, i) => product(10 - i)));
    // 70 calls while finance reads page 2: more than a page between it and the newest rows.
    for (let i = 101; i <= 170; i++) await env.db('usage_ledger').insert(call(orgId, product(i), 1_000 - i));

    const seen = new Set(listed(second, tag));
    let page = second;
    const visited: string[] = [];
    for (let step = 0; step < 10; step++) {
      const previous = linkOf(page, 'prev');
      if (previous === null) break;
      visited.push(previous);
      page = await open(client, previous);
      for (const row of listed(page, tag)) seen.add(row);
    }
    const every = [...Array.from({ length: 60 }, (_, i) => product(i + 1)), ...Array.from({ length: 70 }, (_, i) => product(i + 101))];
    expect(every.filter((row) => !seen.has(row)), visited.join('\n')).toEqual([]);
    // The climb ends on the first page, the newest 50 at its top.
    expect(listed(page, tag)).toEqual(Array.from({ length: 50 }, (_, i) => product(170 - i)));
    expect(page).toContain('Page 1 of 3 · 130 rows');
    expect(visited.length, visited.join('\n')).toBe(3);
  });
});
