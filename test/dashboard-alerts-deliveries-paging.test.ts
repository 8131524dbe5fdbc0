import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// The alerts page's webhook delivery log of an organization with more deliveries than a page
// holds (50): the ledger's pager under it, over the real dashboard and Postgres, so older
// deliveries are reached and the reader knows how many there are.

const env = dashboardForFile();

type Client = Awaited<ReturnType<typeof adminOfNewOrg>>['client'];

async function open(client: Client, path: string) {
  const res = await client.get(path);
  expect(res.status, path).toBe(200);
  return res.text();
}

/** The deliveries the log lists, by id, in its order (its table's, not its pager links'). */
const listed = (body: string, tag: string) => [...(/id="alerts-deliveries"[\s\S]*?<\/tbody>/.exec(body)?.[0] ?? '').matchAll(new RegExp(`whd_${tag}_\\d+`, 'g'))].map((m) => m[0]);
const nextLink = (body: string) => /<a [^>]*rel="next" href="([^"]*)"/.exec(/id="alerts-deliveries"[\s\S]*/.exec(body)?.[0] ?? '')?.[1]?.replaceAll('&amp;', '&') ?? null;

describe('when an organization has 120 webhook deliveries', () => {
  it('then the alerts page lists the newest 50, says how many there are, and its pager reaches the oldest, each once, in order', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Deliveries paging test');
    const tag = randomUUID().slice(0, 8);
    const ids = Array.from({ length: 120 }, (_, i) => `whd_${tag}_${String(i + 1).padStart(3, '0')}`);
    // Two at a time in the same instant: the order must still be one, or a page repeats or skips one.
    await env.db('webhook_deliveries').insert(ids.map((id, i) => ({
      id, organization_id: orgId, event_type: 'alert.threshold_crossed', payload: {}, status: 'delivered', attempts: 1, last_status_code: 200,
      created_at: new Date(Date.UTC(2026, 10, 1) + Math.floor(i / 2) * 60_000), delivered_at: new Date(Date.UTC(2026, 10, 1) + Math.floor(i / 2) * 60_000),
    })));
    const newestFirst = [...ids].reverse();

    const first = await open(client, `/orgs/${orgId}/alerts`);
    expect(listed(first, tag)).toEqual(newestFirst.slice(0, 50));
    expect(first).toContain('Page 1 of 3 · 120 deliveries');
    const seen = listed(first, tag);
    let next = nextLink(first);
    while (next !== null) {
      const body = await open(client, next);
      seen.push(...listed(body, tag));
      next = nextLink(body);
    }
    expect(seen).toEqual(newestFirst);
    expect(await open(client, `/orgs/${orgId}/alerts?page=99`)).toContain('Page 3 of 3 · 120 deliveries');

    client.jar.set('dash_lang', 'it');
    const italian = await open(client, `/orgs/${orgId}/alerts?page=2`);
    expect(italian).toContain('Pagina 2 di 3 · 120 invii');
  });
});

describe('when a delivery is made while a reader moves from the first page of the log to the next', () => {
  it('then the next page goes on from the last delivery the reader saw: none listed twice, none skipped, however close in time', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Deliveries made meanwhile test');
    const tag = randomUUID().slice(0, 8);
    const ids = Array.from({ length: 60 }, (_, i) => `whd_${tag}_${String(i + 1).padStart(3, '0')}`);
    // Microseconds apart, in threes within a millisecond, as Postgres keeps them (a Date would not).
    await env.db.raw(
      `INSERT INTO webhook_deliveries (id, organization_id, event_type, payload, status, attempts, last_status_code, created_at)
       SELECT ? || lpad(g::text, 3, '0'), ?, 'alert.threshold_crossed', '{}', 'delivered', 1, 200,
              timestamptz '2026-11-01T00:00:00Z' + (g / 3) * interval '1 millisecond' + (g % 3) * interval '1 microsecond'
         FROM generate_series(1, 60) g`,
      [`whd_${tag}_`, orgId],
    );
    const newestFirst = [...ids].reverse();

    const first = await open(client, `/orgs/${orgId}/alerts`);
    expect(listed(first, tag)).toEqual(newestFirst.slice(0, 50));
    expect(first).toContain('Page 1 of 2 · 60 deliveries');
    const newest = `whd_${tag}_999`;
    await env.db('webhook_deliveries').insert({ id: newest, organization_id: orgId, event_type: 'alert.test', payload: {}, status: 'pending', attempts: 0, next_attempt_at: new Date(Date.now() + 3_600_000) });

    const next = nextLink(first);
    expect(next).not.toBeNull();
    const second = await open(client, next!);
    expect(listed(second, tag)).toEqual(newestFirst.slice(50));
    expect(second).toContain('Page 2 of 2 · 61 deliveries');
    expect(nextLink(second)).toBeNull();
    // Previous, from the page's first delivery: the 50 above it, then the first page, the newest,
    // the new one among them.
    const previousOf = (body: string) => /<a [^>]*rel="prev" href="([^"]*)"/.exec(/id="alerts-deliveries"[\s\S]*/.exec(body)![0])?.[1]?.replaceAll('&amp;', '&');
    const above = await open(client, previousOf(second)!);
    expect(listed(above, tag)).toEqual(newestFirst.slice(0, 50));
    expect(above).toContain('Page 2 of 3 · 61 deliveries');
    const back = await open(client, previousOf(above)!);
    expect(listed(back, tag)).toEqual([newest, ...newestFirst.slice(0, 49)]);
    expect(back).toContain('Page 1 of 2 · 61 deliveries');

    // A cursor that is not one: the first page, as the ledger's.
    for (const bad of ['older=junk', 'older=12.whd_x%27%20OR%201=1', 'newer=1.2.3', 'older=']) {
      const body = await open(client, `/orgs/${orgId}/alerts?${bad}`);
      expect(listed(body, tag), bad).toEqual([newest, ...newestFirst.slice(0, 49)]);
      expect(body, bad).toContain('Page 1 of 2 · 61 deliveries');
    }
  });
});
