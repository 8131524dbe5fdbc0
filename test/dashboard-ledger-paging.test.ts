import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// The ledger page of an organization whose month holds more rows than the page counts
// (100,000): its numbered pages stop there, and the rows past them are reached by row (keyset
// links), over the real dashboard and Postgres, with the month's rows written straight to the
// ledger (one INSERT … SELECT, not a call each).

const env = dashboardForFile();
const MONTH = '2026-10';
const CALLS = 100_100;

type Client = Awaited<ReturnType<typeof adminOfNewOrg>>['client'];

/** An organization whose October is its opening grant, then 100,100 calls, the first of them to "oldest-product". */
async function busyOrganization() {
  const { orgId, client } = await adminOfNewOrg(env, `Ledger paging ${randomUUID()} SRL`);
  await env.db('usage_ledger').insert({
    event_id: `grt_${randomUUID()}`, organization_id: orgId, entry_type: 'grant', source: 'system', credits_delta: 10_000_000,
    credits_balance_after: 10_000_000, period: MONTH, occurred_at: new Date('2026-10-01T00:00:00Z'), reason: 'opening grant of the paging test',
  });
  await env.db.raw(
    `INSERT INTO usage_ledger (event_id, organization_id, entry_type, source, product, quantity, unit, credits_delta, credits_balance_after, period, occurred_at)
     SELECT ? || g, ?, 'usage', 'api', CASE WHEN g = 1 THEN 'oldest-product' ELSE 'company-financials' END, 1, 'credits', -1, 10000000 - g, ?,
            timestamptz '2026-10-02T00:00:00Z' + g * interval '1 second'
       FROM generate_series(1, ?) g`,
    // Short event ids, the organization's own: their unique index is most of the insert's time.
    [`${orgId}.`, orgId, MONTH, CALLS],
  );
  return { orgId, client };
}

async function open(client: Client, path: string) {
  const res = await client.get(path);
  expect(res.status, path).toBe(200);
  return res.text();
}

/** The pager's link of that kind (rel="next", data-page="oldest"…), as a path, or null. */
const linkOf = (body: string, attribute: string) => /href="([^"]*)"/.exec(new RegExp(`<a [^>]*${attribute}[^>]*>`).exec(body)?.[0] ?? '')?.[1]?.replaceAll('&amp;', '&') ?? null;
const rowsListed = (body: string) => ((/<tbody>([\s\S]*?)<\/tbody>/.exec(body)?.[1] ?? '').match(/<tr>/g) ?? []).length;

describe('when a month of the ledger holds more rows than the page counts', () => {
  it('then its oldest rows and opening grant are reached by the pager\'s links, past the numbered pages, the filters kept, and the CSV starts at the oldest row as before', async () => {
    const { orgId, client } = await busyOrganization();

    // All types: the first page links to the oldest, which holds the opening grant and the first call.
    const first = await open(client, `/orgs/${orgId}/ledger?period=${MONTH}`);
    expect(first).toContain('Page 1 · more than 100,000 rows');
    const oldestLink = linkOf(first, 'data-page="oldest"');
    expect(oldestLink).toBe(`/orgs/${orgId}/ledger?period=${MONTH}&oldest=1`);
    const oldest = await open(client, oldestLink!);
    expect(oldest).toContain('opening grant of the paging test');
    expect(oldest).toContain('<code>oldest-product</code>');
    expect(oldest).toContain('The oldest rows · more than 100,000 rows');
    expect(rowsListed(oldest)).toBe(50);
    expect(linkOf(oldest, 'rel="next"')).toBeNull();
    // Its Previous goes back up by row: the 50 rows above it, the grant and first call not among them.
    const above = await open(client, linkOf(oldest, 'rel="prev"')!);
    expect(rowsListed(above)).toBe(50);
    expect(above).not.toContain('oldest-product');
    expect(linkOf(above, 'rel="next"')).toMatch(new RegExp(`^/orgs/${orgId}/ledger\\?period=${MONTH}&older=${MONTH}\\.\\d+$`));

    // Climbing back by row ends at the top: the rows newer than the third newest are the first
    // page's first two, and the first page is what opens, nothing above.
    const third = await env.db('usage_ledger').where({ organization_id: orgId, period: MONTH }).orderBy('id', 'desc').offset(2).first<{ id: string }>('id');
    const top = await open(client, `/orgs/${orgId}/ledger?period=${MONTH}&newer=${MONTH}.${third!.id}`);
    expect(rowsListed(top)).toBe(50);
    expect(top).toContain('Page 1 · more than 100,000 rows');
    expect(linkOf(top, 'rel="prev"')).toBeNull();
    expect(linkOf(top, 'rel="next"')).toMatch(/&older=/);

    // Usage only, a page past the count: the last numbered page, whose Next goes on by row to the end.
    const last = await open(client, `/orgs/${orgId}/ledger?period=${MONTH}&type=usage&page=99999`);
    expect(last).toContain('Page 2,001 · more than 100,000 rows');
    let seen = rowsListed(last);
    let next = linkOf(last, 'rel="next"');
    let body = last;
    let requests = 1;
    while (next !== null) {
      expect(next).toContain(`period=${MONTH}&type=usage&older=`);
      body = await open(client, next);
      seen += rowsListed(body);
      next = linkOf(body, 'rel="next"');
      requests += 1;
    }
    expect(requests).toBe(2);
    // Rows 100,001 to 100,100 of the month's calls: the oldest, and no grant (the filter held).
    expect(seen).toBe(100);
    expect(body).toContain('<code>oldest-product</code>');
    expect(body).not.toContain('opening grant');

    // The download is unchanged: the month from its oldest row, the opening grant then the first
    // call (only its start is read: dashboard-ledger-csv.test.ts holds the whole file to the CLI's).
    const download = await client.get(`/orgs/${orgId}/ledger.csv?period=${MONTH}`);
    expect(download.status).toBe(200);
    const reader = download.body!.pipeThrough(new TextDecoderStream()).getReader();
    let start = '';
    while (start.split('\r\n').length < 4) {
      const chunk = await reader.read();
      if (chunk.done) break;
      start += chunk.value;
    }
    await reader.cancel();
    const [, grant, call] = start.split('\r\n');
    expect(grant).toContain('opening grant of the paging test');
    expect(call).toContain('oldest-product');

    // Within the count too, Next goes on from page 1's last row: a row applied meanwhile at the
    // head of the month (a grant, so the usage pages above are as they were) pushes none of
    // page 1's rows onto page 2. Each call's balance after is its own: 10,000,000 less its number.
    const pageOne = await open(client, `/orgs/${orgId}/ledger?period=${MONTH}`);
    const balances = (body: string) => [...(/<tbody>([\s\S]*?)<\/tbody>/.exec(body)?.[1] ?? '').matchAll(/<tr>[\s\S]*?<\/tr>/g)].map((m) => /9,899,\d{3}/.exec(m[0])?.[0]);
    expect(balances(pageOne)).toEqual(Array.from({ length: 50 }, (_, i) => `9,899,${900 + i}`));
    await env.db('usage_ledger').insert({
      event_id: `grt_${randomUUID()}`, organization_id: orgId, entry_type: 'grant', source: 'system', credits_delta: 1,
      credits_balance_after: 9_899_901, period: MONTH, occurred_at: new Date('2026-10-31T00:00:00Z'), reason: 'applied meanwhile',
    });
    const pageTwo = await open(client, linkOf(pageOne, 'rel="next"')!);
    expect(balances(pageTwo)).toEqual(Array.from({ length: 50 }, (_, i) => `9,899,${950 + i}`));
    expect(linkOf(pageOne, 'rel="next"')).toMatch(new RegExp(`^/orgs/${orgId}/ledger\\?period=${MONTH}&older=${MONTH}\\.\\d+$`));
    expect(pageTwo).toContain('Page 2 · more than 100,000 rows');
    expect(pageTwo).not.toContain('applied meanwhile');
  }, 60_000);
});
