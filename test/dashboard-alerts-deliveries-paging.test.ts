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

/** The deliveries the log lists, by id, in its order. */
const listed = (body: string, tag: string) => [...(/id="alerts-deliveries"[\s\S]*/.exec(body)?.[0] ?? '').matchAll(new RegExp(`whd_${tag}_\\d+`, 'g'))].map((m) => m[0]);
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
