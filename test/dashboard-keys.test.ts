import { describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../core/auth/index.js';
import { hashToken } from '../core/dashboard-auth/index.js';
import { adminOfNewOrg, createMember, dashboardForFile, httpSession } from './dashboard-fixtures.js';
import { formats } from '../dashboard/i18n/translate.js';
import { saidWithVowel } from '../dashboard/i18n/italian-articles.js';

// The keys page over HTTP: rotation with a grace period, expiry dates, and the one-time display.

const env = dashboardForFile();

type Client = Awaited<ReturnType<typeof adminOfNewOrg>>['client'];

/** A form that made a key answers 303 to the keys page; the page it leads to, as a browser opens it. */
async function followed(client: Client, res: Response, orgId: string): Promise<Response> {
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe(`/orgs/${orgId}/keys`);
  return client.get(`/orgs/${orgId}/keys`);
}

const newKeyIn = async (res: Response) => /<code id="new-key"[^>]*>(sk_live_[0-9A-Za-z]{32})<\/code>/.exec(await res.text())?.[1];

describe('when an admin creates a key', () => {
  it('then the form answers 303 to the keys page, which shows the key once, to this session only; the session row holds it sealed', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key once test');
    const res = await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'ERP' });
    expect(res.status).toBe(303);
    // Nothing of the key in the address.
    expect(res.headers.get('location')).toBe(`/orgs/${orgId}/keys`);
    expect(await res.text()).not.toContain('sk_live_');
    const [stored] = await env.db('api_keys').where({ organization_id: orgId });
    // Waiting for the page: not readable in the sessions table, nor shown to another admin.
    const { flashes } = await env.db('sessions').where({ id_hash: hashToken(client.jar.get('dash_session')!) }).first('flashes');
    expect(Object.keys(flashes)).toEqual([`/orgs/${orgId}/keys`]);
    expect(JSON.stringify(flashes)).not.toContain(stored.prefix);
    const other = httpSession(env.dashboard.url);
    const colleague = await createMember(env.db, orgId, 'admin');
    await other.signIn(colleague.email, colleague.password);
    expect(await newKeyIn(await other.get(`/orgs/${orgId}/keys`))).toBeUndefined();

    const shown = await client.get(`/orgs/${orgId}/keys`);
    expect(shown.status).toBe(200);
    const key = (await newKeyIn(shown))!;
    expect(hashApiKey(key)).toBe(stored.hash);
    expect(key.startsWith(stored.prefix)).toBe(true);
    // Once: the next visit lists it by prefix only.
    const again = await (await client.get(`/orgs/${orgId}/keys`)).text();
    expect(again).not.toContain(key);
    expect(again).toContain(`${stored.prefix}…`);
    expect(await env.db('api_keys').where({ organization_id: orgId })).toHaveLength(1);
  });

  it('then of several visits of the keys page at once (two tabs), exactly one shows the key', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key once parallel test');
    expect((await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'ERP' })).status).toBe(303);
    const pages = await Promise.all(Array.from({ length: 5 }, async () => newKeyIn(await client.get(`/orgs/${orgId}/keys`))));
    expect(pages.filter(Boolean)).toHaveLength(1);
  });
});


describe('when an admin rotates a key', () => {
  it('then a new key is shown once and the old one expires after the chosen grace period', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'billing sync' });
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    const before = Date.now();
    const res = await followed(client, await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: token, graceSeconds: '3600' }), orgId);
    const body = await res.text();
    expect(body).toContain(`Key rotated. The old key ${old.record.prefix}… stops working at `);
    const newKey = /<code id="new-key"[^>]*>(sk_live_[0-9A-Za-z]{32})<\/code>/.exec(body)![1]!;
    const stored = await env.db('api_keys').where({ hash: hashApiKey(newKey) }).first();
    expect(stored).toMatchObject({ organization_id: orgId, name: 'billing sync', rotated_from: old.record.id, revoked_at: null });
    const previous = await env.db('api_keys').where({ id: old.record.id }).first();
    expect(previous.revoked_at).toBeNull();
    expect(previous.expires_at.getTime()).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
    expect(previous.expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000);
    // Shown once: the list afterwards has only prefixes.
    const list = await (await client.get(`/orgs/${orgId}/keys`)).text();
    expect(list).not.toContain(newKey);
    expect(list).toContain(`${newKey.slice(0, 12)}…`);
    expect(list).toContain('Expiring');
    // The replaced key offers no second rotation; its successor does.
    expect(list).not.toContain(`action="/orgs/${orgId}/keys/${old.record.id}/rotate"`);
    expect(list).toContain(`action="/orgs/${orgId}/keys/${stored.id}/rotate"`);
    // The address a rotation answered at before it redirected, opened again, is the keys page.
    const revisit = await client.get(`/orgs/${orgId}/keys/${old.record.id}/rotate`);
    expect(revisit.status).toBe(302);
    expect(revisit.headers.get('location')).toBe(`/orgs/${orgId}/keys`);
  });

  it('then a grace period of zero revokes the old key at once', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation now test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'compromised' });
    const res = await followed(client, await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), graceSeconds: '0' }), orgId);
    expect(await res.text()).toContain(`The old key ${old.record.prefix}… stops working now.`);
    expect((await env.db('api_keys').where({ id: old.record.id }).first()).revoked_at).not.toBeNull();
  });
});

describe('when a form is sent with a value the page does not offer', () => {
  it('then a rotation grace period it does not offer is refused (422) and nothing changes, rather than read as a day', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation grace test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'grace' });
    for (const graceSeconds of ['-5', '60', '']) {
      const res = await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), graceSeconds });
      expect(res.status, graceSeconds).toBe(422);
      expect(await res.text()).toContain('Please check the form: Old key keeps working for: Invalid option');
    }
    expect(await env.db('api_keys').where({ organization_id: orgId })).toHaveLength(1);
    expect((await env.db('api_keys').where({ id: old.record.id }).first()).expires_at).toBeNull();
  });

  it('then revoking a key already revoked changes nothing, adds no second activity row, and says it had been revoked and when, in both languages', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Revoke twice test');
    const key = await createApiKey(env.db, { organizationId: orgId, name: 'twice' });
    const locations: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await client.post(`/orgs/${orgId}/keys/${key.record.id}/revoke`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`) });
      expect(res.status).toBe(302);
      locations.push(res.headers.get('location')!);
    }
    expect(await env.db('audit_log').where({ organization_id: orgId, action: 'key.revoked' })).toHaveLength(1);
    expect(locations).toEqual([`/orgs/${orgId}/keys?done=revoked&key=${key.record.id}`, `/orgs/${orgId}/keys?done=already_revoked&key=${key.record.id}`]);
    const revokedAt = (await env.db('api_keys').where({ id: key.record.id }).first()).revoked_at as Date;
    const again = await (await client.get(locations[1]!)).text();
    expect(again).toContain(`Key ${key.record.prefix}… had already been revoked, on ${formats('en').dateTime(revokedAt)}: nothing changed.`);
    expect(again).not.toContain('revoked: the API refuses it from now on');
    client.jar.set('dash_lang', 'it');
    const at = formats('it').dateTime(revokedAt);
    expect(await (await client.get(locations[1]!)).text()).toContain(`La chiave ${key.record.prefix}… era già stata revocata ${saidWithVowel(at) ? 'l&#39;' : 'il '}${at}: non è cambiato nulla.`);
  });
});

describe('when an admin creates a key with an expiry date', () => {
  it('then it expires at the end of that day (UTC), and a past date is refused', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Expiry test');
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    const ok = await client.post(`/orgs/${orgId}/keys`, { _csrf: token, name: 'temporary', expiresOn: '2099-03-31' });
    expect(ok.status).toBe(303);
    // A date decades ahead is not "Expiring": that warns of keys that stop working soon.
    const list = await (await client.get(`/orgs/${orgId}/keys`)).text();
    expect(list).not.toContain('Expiring');
    expect(list).toContain('Active');
    expect((await env.db('api_keys').where({ organization_id: orgId, name: 'temporary' }).first()).expires_at.toISOString()).toBe('2099-03-31T23:59:59.999Z');
    const past = await client.post(`/orgs/${orgId}/keys`, { _csrf: token, name: 'already expired', expiresOn: '2001-01-01' });
    expect(past.status).toBe(422);
    // The field named as such: "(optional)" is a hint of the form's label, not part of its name.
    expect(/<div class="notice notice-bad" role="alert"[^>]*>([^<]*)<\/div>/.exec(await past.text())?.[1]).toBe('Please check the form: Expiry: must be in the future');
    expect(await env.db('api_keys').where({ organization_id: orgId, name: 'already expired' }).first()).toBeUndefined();
  });
});

describe('when an admin rotates the same key several times at once (a double click)', () => {
  it('then exactly one rotation succeeds, the others are refused and create nothing', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Parallel rotation test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'double click' });
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: token, graceSeconds: '3600' })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([303, 422, 422, 422, 422]);
    for (const res of responses.filter((r) => r.status === 422)) expect(await res.text()).toContain('This key has already been rotated');
    const successors = await env.db('api_keys').where({ rotated_from: old.record.id });
    expect(successors).toHaveLength(1);
    expect(await env.db('api_keys').where({ organization_id: orgId })).toHaveLength(2);
    expect(await env.db('audit_log').where({ organization_id: orgId, action: 'key.rotated' })).toHaveLength(1);
  });

  it('then a key rotated earlier (still in its grace period) or revoked cannot be rotated again', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotate twice test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'rotated once' });
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    expect((await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: token, graceSeconds: '86400' })).status).toBe(303);
    const again = await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: token, graceSeconds: '86400' });
    expect(again.status).toBe(422);
    expect(await again.text()).toContain('This key has already been rotated');
    expect(await env.db('api_keys').where({ rotated_from: old.record.id })).toHaveLength(1);

    const revoked = await createApiKey(env.db, { organizationId: orgId, name: 'revoked' });
    expect((await client.post(`/orgs/${orgId}/keys/${revoked.record.id}/revoke`, { _csrf: token })).status).toBe(302);
    const ofRevoked = await client.post(`/orgs/${orgId}/keys/${revoked.record.id}/rotate`, { _csrf: token, graceSeconds: '3600' });
    expect(ofRevoked.status).toBe(422);
    expect(await env.db('api_keys').where({ rotated_from: revoked.record.id })).toHaveLength(0);
  });
});

describe('when a rotation is refused on an Italian page', () => {
  it('then the keys page says why in Italian: the key was already rotated, or it is no longer active', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation Italian test');
    client.jar.set('dash_lang', 'it');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'rotated once' });
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    expect((await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: token, graceSeconds: '86400' })).status).toBe(303);
    const again = await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: token, graceSeconds: '86400' });
    expect(again.status).toBe(422);
    const body = await again.text();
    expect(body).toContain('Questa chiave è già stata ruotata: ruota invece la chiave che la sostituisce.');
    expect(body).not.toContain('already been rotated');

    const revoked = await createApiKey(env.db, { organizationId: orgId, name: 'revoked' });
    await client.post(`/orgs/${orgId}/keys/${revoked.record.id}/revoke`, { _csrf: token });
    const ofRevoked = await client.post(`/orgs/${orgId}/keys/${revoked.record.id}/rotate`, { _csrf: token, graceSeconds: '3600' });
    expect(ofRevoked.status).toBe(422);
    const revokedBody = await ofRevoked.text();
    expect(revokedBody).toContain('Si può ruotare solo una chiave attiva');
    expect(revokedBody).not.toContain('Only an active key');
  });
});

describe('when an admin rotates a key that has an expiry date', () => {
  const expiry = new Date('2099-12-31T23:59:59.999Z');
  const newKeyOf = async (client: Client, res: Response, orgId: string) => {
    const key = (await newKeyIn(await followed(client, res, orgId)))!;
    return env.db('api_keys').where({ hash: hashApiKey(key) }).first();
  };

  it('then the new key keeps the expiry the old key had before the grace period shortened it', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation expiry test');
    const old = await createApiKey(env.db, { organizationId: orgId, name: 'until 2099', expiresAt: expiry });
    const res = await client.post(`/orgs/${orgId}/keys/${old.record.id}/rotate`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), graceSeconds: '3600' });
    expect((await newKeyOf(client, res, orgId)).expires_at?.toISOString()).toBe(expiry.toISOString());
    expect((await env.db('api_keys').where({ id: old.record.id }).first()).expires_at.getTime()).toBeLessThanOrEqual(Date.now() + 3_600_000);
  });

  it('then with no grace period (the old key revoked) the new key keeps it too, and a key that never expired gives one that never expires', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Rotation expiry now test');
    const token = await client.csrf(`/orgs/${orgId}/keys`);
    const dated = await createApiKey(env.db, { organizationId: orgId, name: 'dated', expiresAt: expiry });
    const now = await client.post(`/orgs/${orgId}/keys/${dated.record.id}/rotate`, { _csrf: token, graceSeconds: '0' });
    expect((await newKeyOf(client, now, orgId)).expires_at?.toISOString()).toBe(expiry.toISOString());
    const forever = await createApiKey(env.db, { organizationId: orgId, name: 'forever' });
    const res = await client.post(`/orgs/${orgId}/keys/${forever.record.id}/rotate`, { _csrf: token, graceSeconds: '3600' });
    expect((await newKeyOf(client, res, orgId)).expires_at).toBeNull();
  });
});

describe('when an admin creates a key with an expiry that is not a date', () => {
  // 2030-02-31 is the sneaky one: `new Date` rolls it over to 3 March instead of refusing it.
  it.each(['31/12/2030', '2030-02-31', '2026-02-31', '2030-12-31T00:00', 'tomorrow'])('then %s is a form error naming the expiry field, and no key is made', async (expiresOn) => {
    const { orgId, client } = await adminOfNewOrg(env, 'Bad expiry test');
    const res = await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'bad expiry', expiresOn });
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(/<div class="notice notice-bad" role="alert"[^>]*>([^<]*)<\/div>/.exec(body)?.[1]).toMatch(/^Please check the form: Expiry: a date as YYYY-MM-DD/);
    expect(body).not.toContain('id="new-key"');
    // What was typed comes back in the form, to be corrected rather than typed again.
    expect(body).toMatch(/<input[^>]*name="name"[^>]*value="bad expiry"/);
    expect(body).toContain(`value="${expiresOn}"`);
    // And why, under the field.
    expect(body).toMatch(/<p class="field-error" id="key-expiry-error">a date as YYYY-MM-DD \(e.g. 2030-12-31\), or blank/);
    expect(await env.db('api_keys').where({ organization_id: orgId })).toHaveLength(0);
  });

  it('then a blank expiry still means a key that never expires', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Blank expiry test');
    const res = await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'no expiry', expiresOn: '' });
    expect(res.status).toBe(303);
    expect((await env.db('api_keys').where({ organization_id: orgId, name: 'no expiry' }).first()).expires_at).toBeNull();
  });
});

describe('when an admin creates a test-mode key', () => {
  it('then the key is sk_test_, shown once, listed by its sk_test_ prefix, and its activity row says test', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Test-mode key test');
    const form = await (await client.get(`/orgs/${orgId}/keys`)).text();
    // Live is what the form offers first and sends unless changed.
    expect(form).toMatch(/<select id="key-mode" name="mode"[^>]*>\s*<option value="live" selected>Live \(sk_live_…\)<\/option>\s*<option value="test">Test \(sk_test_…\)<\/option>/);
    const shown = await followed(client, await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'CI', mode: 'test' }), orgId);
    const key = /<code id="new-key"[^>]*>(sk_test_[0-9A-Za-z]{32})<\/code>/.exec(await shown.text())?.[1];
    expect(key).toBeDefined();
    const stored = await env.db('api_keys').where({ organization_id: orgId }).first();
    expect(stored).toMatchObject({ name: 'CI', mode: 'test', hash: hashApiKey(key!) });
    expect(stored.prefix.startsWith('sk_test_')).toBe(true);
    expect(await (await client.get(`/orgs/${orgId}/keys`)).text()).toContain(`<code>${stored.prefix}…</code>`);
    const [audit] = await env.db('audit_log').where({ organization_id: orgId, action: 'key.created' }).pluck('details');
    expect(audit).toEqual({ keyId: stored.id, name: 'CI', mode: 'test' });
  });

  it('then a mode the form does not offer is refused (422) with the form as typed, and no key is made', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Bad key mode test');
    const res = await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'sandbox', mode: 'sandbox' });
    expect(res.status).toBe(422);
    const body = await res.text();
    expect(body).toContain('Please check the form: Mode: must be live or test');
    expect(body).toMatch(/<input[^>]*name="name"[^>]*value="sandbox"/);
    // On an Italian page, the field by its label and why in Italian.
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name: 'sandbox', mode: 'sandbox' })).text();
    expect(italian).toContain('Controlla il modulo: Modalità: deve essere live o test');
    expect(await env.db('api_keys').where({ organization_id: orgId })).toHaveLength(0);
  });

  it('then the form is in Italian on an Italian page', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key mode Italian test');
    client.jar.set('dash_lang', 'it');
    const body = await (await client.get(`/orgs/${orgId}/keys`)).text();
    expect(body).toContain('<label for="key-mode">Modalità</label>');
    expect(body).toContain('Produzione (sk_live_…)');
  });
});

describe('when a key is revoked', () => {
  it('then the page says which key by its prefix, read from the key itself: a link naming another prefix, or another organization\'s key, shows nothing', async () => {
    const { orgId, client } = await adminOfNewOrg(env, 'Revocation notice test');
    const key = await createApiKey(env.db, { organizationId: orgId, name: 'to revoke' });
    const revoked = await client.post(`/orgs/${orgId}/keys/${key.record.id}/revoke`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`) });
    const location = revoked.headers.get('location')!;
    expect(location).toBe(`/orgs/${orgId}/keys?done=revoked&key=${key.record.id}`);
    expect(await (await client.get(location)).text()).toContain(`${key.record.prefix}…`);

    const spoofed = await (await client.get(`/orgs/${orgId}/keys?done=revoked&prefix=${encodeURIComponent('Your account is suspended')}`)).text();
    // Not on the page; the language links carry the page's own address, query and all, encoded.
    expect(spoofed.replace(/href="[^"]*"/g, '')).not.toContain('suspended');
    const other = await adminOfNewOrg(env, 'Revocation notice other org');
    const theirs = await createApiKey(env.db, { organizationId: other.orgId, name: 'theirs' });
    await env.db('api_keys').where({ id: theirs.record.id }).update({ revoked_at: new Date() });
    expect(await (await client.get(`/orgs/${orgId}/keys?done=revoked&key=${theirs.record.id}`)).text()).not.toContain(theirs.record.prefix);
  });
});

describe('when an admin names a key with a line break or a terminal escape', () => {
  // A key's name is printed on one line: in `cli key list`, on an operator's terminal (where ESC
  // starts a control sequence) and in the activity log.
  it.each(['line one\nline two', 'red \u001b[31mRED\u001b[0m', 'tab\there'])('then %j is refused under the name field, in the page\'s language, and no key is made', async (name) => {
    const { orgId, client } = await adminOfNewOrg(env, 'Key name control characters test');
    const res = await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name });
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(/<p class="field-error" id="key-name-error">must not contain line breaks, tabs or other control characters/);
    client.jar.set('dash_lang', 'it');
    const italian = await (await client.post(`/orgs/${orgId}/keys`, { _csrf: await client.csrf(`/orgs/${orgId}/keys`), name })).text();
    expect(italian).toMatch(/<p class="field-error" id="key-name-error">non può contenere a capo, tabulazioni o altri caratteri di controllo/);
    expect(await env.db('api_keys').where({ organization_id: orgId })).toHaveLength(0);
  });
});
