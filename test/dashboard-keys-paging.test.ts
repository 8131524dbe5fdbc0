import { describe, expect, it } from 'vitest';
import { createApiKey } from '../core/auth/index.js';
import { adminOfNewOrg, dashboardForFile } from './dashboard-fixtures.js';

// The keys page of an organization with many keys: 50 a page, as the ledger and the activity
// page, with a filter by state (active by default) that the pager's links keep.

const env = dashboardForFile();

type Client = Awaited<ReturnType<typeof adminOfNewOrg>>['client'];

/** `count` keys named "key 1"…"key N", made in that order. */
async function withKeys(orgId: string, count: number) {
  const ids: string[] = [];
  for (let i = 1; i <= count; i++) ids.push((await createApiKey(env.db, { organizationId: orgId, name: `key ${i}` })).record.id);
  return ids;
}

/** The keys the list shows, by name, in its order. */
const listed = (body: string) => [...(/<tbody>([\s\S]*?)<\/tbody>/.exec(body)?.[1] ?? '').matchAll(/<tr><td><strong>([^<]*)<\/strong>/g)].map((m) => m[1]);

async function open(client: Client, path: string) {
  const res = await client.get(path);
  expect(res.status, path).toBe(200);
  return res.text();
}

const amp = (path: string) => path.replaceAll('&', '&amp;');
/** A pager link by row: `start` (as written, unescaped), then a key's cursor (its time in microseconds, its id). */
const byRow = (start: string) => new RegExp(`${amp(start).replace(/[?.]/g, '\\$&')}\\d+\\.key_[A-Za-z0-9]+"`);
const linkOf = (body: string, rel: 'prev' | 'next') => new RegExp(`<a [^>]*rel="${rel}" href="([^"]*)"`).exec(body)?.[1]?.replaceAll('&amp;', '&') ?? null;

describe('when an organization has 120 keys', () => {
  it('then the keys page lists 50 a page, newest first, with the same pager as the ledger', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys paging test');
    await withKeys(orgId, 120);
    const first = await open(client, `/orgs/${orgId}/keys`);
    expect(listed(first)).toEqual(Array.from({ length: 50 }, (_, i) => `key ${120 - i}`));
    expect(first).toContain('Page 1 of 3 · 120 keys');
    expect(first).toMatch(byRow(`rel="next" href="/orgs/${orgId}/keys?state=active&older=`));
    expect(first).not.toContain('rel="prev"');

    const third = await open(client, `/orgs/${orgId}/keys?page=3`);
    expect(listed(third)).toEqual(Array.from({ length: 20 }, (_, i) => `key ${20 - i}`));
    expect(third).toContain('Page 3 of 3 · 120 keys');
    expect(third).toMatch(byRow(`rel="prev" href="/orgs/${orgId}/keys?state=active&newer=`));
    expect(third).not.toContain('rel="next"');
  });

  it('then a page that is not a number is the first and one past the end the last, with 200, as on the ledger', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys bad page test');
    await withKeys(orgId, 120);
    for (const [asked, shown] of [['abc', 1], ['0', 1], ['-2', 1], ['99', 3], ['2.7', 2]] as const) {
      const body = await open(client, `/orgs/${orgId}/keys?page=${asked}`);
      expect(body, asked).toContain(`Page ${shown} of 3 · 120 keys`);
      // The ledger answers the same address the same way.
      const ledger = await client.get(`/orgs/${orgId}/ledger?page=${asked}`);
      expect(ledger.status, asked).toBe(200);
      expect(await ledger.text(), asked).toContain('Page 1 of 1 · 1 row');
    }
  });
});

describe('when a key is made while an admin goes from the first page of the keys to the next', () => {
  it('then the next page goes on from the last key the admin saw, the filter and search kept: none listed twice, none skipped', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys made meanwhile test');
    await withKeys(orgId, 60);
    const newestFirst = Array.from({ length: 60 }, (_, i) => `key ${60 - i}`);
    const first = await open(client, `/orgs/${orgId}/keys?state=active&q=key`);
    expect(listed(first)).toEqual(newestFirst.slice(0, 50));
    expect(first).toContain('Page 1 of 2 · 60 keys');
    await createApiKey(env.db, { organizationId: orgId, name: 'key 61' });

    const second = await open(client, linkOf(first, 'next')!);
    expect(listed(second)).toEqual(newestFirst.slice(50));
    expect(second).toContain('Page 2 of 2 · 61 keys');
    expect(linkOf(second, 'next')).toBeNull();
    expect(linkOf(second, 'prev')).toMatch(new RegExp(`^/orgs/${orgId}/keys\\?state=active&q=key&newer=\\S+$`));
    // Previous, from the page's first key: the 50 above it, then the first page, the new key at its top.
    const above = await open(client, linkOf(second, 'prev')!);
    expect(listed(above)).toEqual(newestFirst.slice(0, 50));
    expect(above).toContain('Page 2 of 3 · 61 keys');
    expect(listed(await open(client, linkOf(above, 'prev')!))).toEqual(['key 61', ...newestFirst.slice(0, 49)]);
    // A cursor that is not one: the first page; a page asked for by number is still read by number.
    for (const bad of ['older=junk', 'older=1.key_x%27%20OR%201=1', 'newer=1.2.3', 'older=']) {
      const body = await open(client, `/orgs/${orgId}/keys?state=active&q=key&${bad}`);
      expect(listed(body), bad).toEqual(['key 61', ...newestFirst.slice(0, 49)]);
      expect(body, bad).toContain('Page 1 of 2 · 61 keys');
    }
    expect(listed(await open(client, `/orgs/${orgId}/keys?state=active&q=key&page=2`))).toEqual(newestFirst.slice(49));
  });
});

describe('when some keys are revoked or expired', () => {
  it('then the page shows the active ones unless asked, and each filter only its own, with the counts', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys filter test');
    const ids = await withKeys(orgId, 10);
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    for (const id of [ids[1], ids[4], ids[7]]) {
      // Revoked from the list at a filter and page: back there, the notice above it.
      const res = await client.post(`/orgs/${orgId}/keys/${id}/revoke`, { _csrf: token, state: 'active', page: '1' });
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(`/orgs/${orgId}/keys?done=revoked&key=${id}&state=active&page=1`);
    }
    await env.db('api_keys').where({ id: ids[0] }).update({ expires_at: new Date(Date.now() - 60_000) });

    const active = await open(client, `/orgs/${orgId}/keys`);
    expect(listed(active)).toEqual(['key 10', 'key 9', 'key 7', 'key 6', 'key 4', 'key 3']);
    expect(active).toMatch(/<a class="tab" href="[^"]*state=active" aria-current="page">Active <span class="muted">6<\/span><\/a>/);
    expect(active).toContain('Page 1 of 1 · 6 keys');
    for (const [state, count] of [['all', 10], ['revoked', 3], ['expired', 1]] as const) {
      expect(active).toContain(`<a class="tab" href="/orgs/${orgId}/keys?state=${state}">`);
      expect(active).toMatch(new RegExp(`state=${state}">\\w+ <span class="muted">${count}</span>`));
    }

    const revoked = await open(client, `/orgs/${orgId}/keys?state=revoked`);
    expect(listed(revoked)).toEqual(['key 8', 'key 5', 'key 2']);
    expect(revoked).toContain('Page 1 of 1 · 3 keys');
    expect(revoked).not.toContain(`/keys/${ids[1]}/revoke`);
    expect(listed(await open(client, `/orgs/${orgId}/keys?state=expired`))).toEqual(['key 1']);
    expect(listed(await open(client, `/orgs/${orgId}/keys?state=all`))).toHaveLength(10);
    // A state the page does not offer: the default, as the ledger ignores a type it does not know.
    expect(listed(await open(client, `/orgs/${orgId}/keys?state=deleted`))).toEqual(listed(active));

    await env.db('api_keys').where({ organization_id: orgId }).whereNull('revoked_at').update({ revoked_at: new Date() });
    expect(await open(client, `/orgs/${orgId}/keys`)).toContain('No active keys. Create one above, or see the revoked and expired ones.');
  });

  it('then the pager keeps the filter, a filter starts at its first page, and a revocation comes back to both', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys filter paging test');
    const ids = await withKeys(orgId, 70);
    // Keys 1–10 active, 11–70 revoked.
    await env.db('api_keys').whereIn('id', ids.slice(10)).update({ revoked_at: new Date() });

    const first = await open(client, `/orgs/${orgId}/keys?state=revoked`);
    expect(first).toContain('Page 1 of 2 · 60 keys');
    expect(first).toMatch(byRow(`rel="next" href="/orgs/${orgId}/keys?state=revoked&older=`));
    const second = await open(client, `/orgs/${orgId}/keys?state=revoked&page=2`);
    expect(listed(second)).toEqual(Array.from({ length: 10 }, (_, i) => `key ${20 - i}`));
    expect(second).toMatch(byRow(`rel="prev" href="/orgs/${orgId}/keys?state=revoked&newer=`));
    expect(listed(await open(client, linkOf(second, 'prev')!))).toEqual(Array.from({ length: 50 }, (_, i) => `key ${70 - i}`));
    expect(second).toMatch(/href="[^"]*state=revoked" aria-current="page">Revoked/);
    // The other filters open at their first page.
    expect(second).toContain(`<a class="tab" href="/orgs/${orgId}/keys?state=active">`);

    const all = await open(client, `/orgs/${orgId}/keys?state=all&page=2`);
    expect(all).toContain('Page 2 of 2 · 70 keys');
    expect(listed(all)).toEqual(Array.from({ length: 20 }, (_, i) => `key ${20 - i}`));
    // A revoke button on page 2 of "all" brings the admin back to page 2 of "all".
    expect(all).toContain(`action="/orgs/${orgId}/keys/${ids[0]}/revoke"`);
    expect(all).toMatch(/<input type="hidden" name="state" value="all"><input type="hidden" name="page" value="2">/);
    const res = await client.post(`/orgs/${orgId}/keys/${ids[0]}/revoke`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), state: 'all', page: '2' });
    const back = await open(client, res.headers.get('location')!);
    expect(back).toContain('Page 2 of 2 · 70 keys');
    expect(back).toContain('Key ');
    expect(back).toMatch(/revoked: the API refuses it from now on/);
  });

  it('then a key just made is shown once on whatever page and filter is opened next', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys filter flash test');
    await withKeys(orgId, 60);
    const made = await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'ERP' });
    expect(made.status).toBe(303);
    const shown = await open(client, `/orgs/${orgId}/keys?state=revoked&page=2`);
    expect(shown).toMatch(/<code id="new-key"[^>]*>sk_live_[0-9A-Za-z]{32}<\/code>/);
    expect(shown).toContain('No revoked keys.');
    expect(await open(client, `/orgs/${orgId}/keys?state=revoked&page=2`)).not.toContain('id="new-key"');
  });
});

describe('when the keys page is read in Italian', () => {
  it('then the pager, the filters and an empty filter speak Italian', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys paging Italian test');
    await withKeys(orgId, 51);
    client.jar.set('dash_lang', 'it');
    const first = await open(client, `/orgs/${orgId}/keys`);
    expect(first).toContain('Pagina 1 di 2 · 51 chiavi');
    expect(first).toContain('Successiva');
    for (const word of ['Tutte', 'Attive', 'Revocate', 'Scadute']) expect(first).toContain(`">${word} <span class="muted">`);
    expect(first).toContain('aria-label="Mostra le chiavi"');
    expect(await open(client, `/orgs/${orgId}/keys?state=expired`)).toContain('Nessuna chiave scaduta.');
  });
});

describe('when an admin looks for one key among many', () => {
  it('then the search finds it by name or prefix, case aside, in the filter shown, the tabs, pager and a revocation keeping it', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys search test');
    await withKeys(orgId, 60);
    const erp = await createApiKey(env.db, { organizationId: orgId, name: 'ERP production' });
    await createApiKey(env.db, { organizationId: orgId, name: '100%_sure' });

    const found = await open(client, `/orgs/${orgId}/keys?q=${encodeURIComponent('erp ')}`);
    expect(listed(found)).toEqual(['ERP production']);
    expect(found).toContain('value="erp"');
    expect(found).toContain(`href="${amp(`/orgs/${orgId}/keys?state=all&q=erp`)}"`);
    // By the start of its prefix, as a log line shows it.
    expect(listed(await open(client, `/orgs/${orgId}/keys?q=${erp.record.prefix.slice(0, 12)}`))).toEqual(['ERP production']);
    // Text, not a pattern: % and _ match themselves only.
    expect(listed(await open(client, `/orgs/${orgId}/keys?q=${encodeURIComponent('0%_')}`))).toEqual(['100%_sure']);
    expect(listed(await open(client, `/orgs/${orgId}/keys?q=${encodeURIComponent('%')}`))).toEqual(['100%_sure']);

    // Many matches page as the list does, the pager keeping the search.
    const many = await open(client, `/orgs/${orgId}/keys?q=key`);
    expect(many).toContain('Page 1 of 2 · 60 keys');
    expect(many).toMatch(byRow(`rel="next" href="/orgs/${orgId}/keys?state=active&q=key&older=`));
    expect(await open(client, `/orgs/${orgId}/keys?q=nothing-like-it`)).toContain('No keys here match “nothing-like-it”.');

    // Revoked from the search's list, the page comes back to it.
    const revoked = await client.post(`/orgs/${orgId}/keys/${erp.record.id}/revoke`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), state: 'active', q: 'erp', page: '1' });
    expect(revoked.status).toBe(302);
    expect(revoked.headers.get('location')).toContain('q=erp');
  });
});

describe('when more than a page of keys is made while an admin reads the last page of the keys', () => {
  it('then Previous climbs back by key through every key made meanwhile and ends at the first page: none skipped', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Keys made by the page meanwhile test');
    await withKeys(orgId, 60);
    const second = await open(client, linkOf(await open(client, `/orgs/${orgId}/keys?state=active`), 'next')!);
    expect(listed(second)).toEqual(Array.from({ length: 10 }, (_, i) => `key ${10 - i}`));
    for (let i = 101; i <= 170; i++) await createApiKey(env.db, { organizationId: orgId, name: `key ${i}` });

    const seen = new Set(listed(second));
    let page = second;
    const visited: string[] = [];
    for (let step = 0; step < 10; step++) {
      const previous = linkOf(page, 'prev');
      if (previous === null) break;
      visited.push(previous);
      page = await open(client, previous);
      for (const name of listed(page)) seen.add(name);
    }
    const every = [...Array.from({ length: 60 }, (_, i) => `key ${i + 1}`), ...Array.from({ length: 70 }, (_, i) => `key ${i + 101}`)];
    expect(every.filter((name) => !seen.has(name)), visited.join('\n')).toEqual([]);
    expect(listed(page)).toEqual(Array.from({ length: 50 }, (_, i) => `key ${170 - i}`));
    expect(page).toContain('Page 1 of 3 · 130 keys');
  });
});
