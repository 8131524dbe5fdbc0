import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, ensureDefaultPlans } from '../core/billing/index.js';
import { hashPassword, hashToken, verifyPassword } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';
import type { RunningServer } from './api-fixtures.js';
import { createMember, createOperator, httpSession, startTestDashboard, uniqueEmail } from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// Sign-in, sessions, cookies, CSRF and the membership gate over plain HTTP (no browser).

let db: Db;
let dashboard: RunningServer;

beforeAll(async () => {
  db = testDb();
  await ensureDefaultPlans(db);
  dashboard = await startTestDashboard(db, { signInLimits: { maxFailures: 3, windowMs: 60_000 } });
});
afterAll(async () => {
  await dashboard?.close();
  await db?.destroy();
});

describe('when passwords are hashed', () => {
  it('then scrypt hashes verify the right password only, and differ for the same password', async () => {
    const a = await hashPassword('correct horse battery');
    const b = await hashPassword('correct horse battery');
    expect(a).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(a).not.toBe(b);
    expect(await verifyPassword('correct horse battery', a)).toBe(true);
    expect(await verifyPassword('correct horse batterz', a)).toBe(false);
    expect(await verifyPassword('anything', null)).toBe(false);
  });
});

describe('when someone signs in', () => {
  it('then the session cookie is HttpOnly and SameSite=Lax, and the table stores only its hash', async () => {
    const org = await createOrganization(db, { name: 'Auth test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const client = httpSession(dashboard.url);
    const res = await client.signIn(admin.email, admin.password);
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/');
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('dash_session='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Lax/);
    expect(cookie).not.toMatch(/; Secure/);
    const token = client.jar.get('dash_session')!;
    expect(await db('sessions').where({ id_hash: token }).first()).toBeUndefined();
    expect(await db('sessions').where({ id_hash: hashToken(token) }).first()).toMatchObject({ user_id: admin.userId });
    expect((await client.get(`/orgs/${org.id}`)).status).toBe(200);
  });

  it('then over https the cookie is also Secure', async () => {
    const secure = await startTestDashboard(db, { secureCookies: true });
    try {
      const org = await createOrganization(db, { name: 'Secure cookie test', planId: 'standard' });
      const admin = await createMember(db, org.id, 'admin');
      const res = await httpSession(secure.url).signIn(admin.email, admin.password);
      expect(res.headers.getSetCookie().find((c) => c.startsWith('dash_session='))).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
  });

  it('then a wrong password is refused, and past the limit even the right one is refused until the window passes', async () => {
    const org = await createOrganization(db, { name: 'Rate limit test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const client = httpSession(dashboard.url);
    for (let i = 0; i < 3; i++) expect((await client.signIn(admin.email, 'wrong password')).status).toBe(401);
    const locked = await client.signIn(admin.email.toUpperCase(), admin.password);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await locked.text()).toContain('Too many attempts');
    expect(client.jar.has('dash_session')).toBe(false);
    // Other people are not affected.
    const other = await createMember(db, org.id, 'finance');
    expect((await httpSession(dashboard.url).signIn(other.email, other.password)).status).toBe(302);
    // Once the failures leave the window, the right password works again.
    await db('sign_in_attempts').whereRaw('lower(email) = ?', [admin.email.toLowerCase()]).update({ at: db.raw("at - interval '2 minutes'") });
    expect((await client.signIn(admin.email, admin.password)).status).toBe(302);
  });

  it('then an unknown e-mail gets the same answer as a wrong password', async () => {
    const res = await httpSession(dashboard.url).signIn(uniqueEmail('nobody'), 'whatever it is');
    expect(res.status).toBe(401);
    expect(await res.text()).toContain('The e-mail or password is not right.');
  });
});

describe('when the sign-in form is refused', () => {
  const post = async (client: ReturnType<typeof httpSession>, email: string, password: string) =>
    client.post('/sign-in', { _csrf: await client.csrf('/sign-in'), email, password });
  /** The sign-in form's field `id`, with its error under it if any. */
  const fieldOf = (body: string, id: string) => new RegExp(`<input id="${id}"[^>]*>\\s*(?:<p class="field-error" id="${id}-error">([^<]*)</p>)?`).exec(body);

  it('then a blank e-mail or password is asked for under its field and in the summary, in English and Italian, and no guess is counted', async () => {
    const org = await createOrganization(db, { name: 'Sign-in blank test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const client = httpSession(dashboard.url);
    const blankEmail = await post(client, '', 'some password');
    expect(blankEmail.status).toBe(422);
    const body = await blankEmail.text();
    expect(body).not.toContain('The e-mail or password is not right.');
    expect(body).toMatch(/<div class="notice notice-bad" role="alert" tabindex="-1" autofocus id="sign-in-error">Please check the form: E-mail: Type the e-mail you sign in with.<\/div>/);
    expect(fieldOf(body, 'email')![0]).toContain('aria-invalid="true" aria-describedby="email-error"');
    expect(fieldOf(body, 'email')![1]).toBe('Type the e-mail you sign in with.');
    expect(fieldOf(body, 'password')![0]).not.toContain('aria-invalid');

    const blankPassword = await (await post(client, admin.email, '')).text();
    expect(blankPassword).toContain('Please check the form: Password: Type your password.');
    expect(fieldOf(blankPassword, 'password')![1]).toBe('Type your password.');
    expect(fieldOf(blankPassword, 'email')![0]).toContain(`value="${admin.email}"`);
    expect(fieldOf(blankPassword, 'email')![0]).not.toContain('aria-invalid');

    client.jar.set('dash_lang', 'it');
    const both = await (await post(client, ' ', '')).text();
    expect(both).toContain("Controlla il modulo: E-mail: Scrivi l&#39;e-mail con cui accedi.; Password: Scrivi la tua password.");
    expect(await db('sign_in_attempts').whereRaw('lower(email) = ?', [admin.email.toLowerCase()]).count<{ n: string }[]>({ n: '*' })).toEqual([{ n: 0 }]);
    expect((await httpSession(dashboard.url).signIn(admin.email, admin.password)).status).toBe(302);
  });

  it('then a wrong password marks both fields invalid, described by the one vague message, which names neither', async () => {
    const org = await createOrganization(db, { name: 'Sign-in wrong test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    for (const email of [admin.email, uniqueEmail('nobody')]) {
      const res = await post(httpSession(dashboard.url), email, 'wrong password');
      expect(res.status).toBe(401);
      const body = await res.text();
      expect(body).toContain('<div class="notice notice-bad" role="alert" tabindex="-1" autofocus id="sign-in-error">The e-mail or password is not right.</div>');
      for (const id of ['email', 'password']) {
        expect(fieldOf(body, id)![0]).toContain('aria-invalid="true" aria-describedby="sign-in-error"');
        expect(fieldOf(body, id)![1]).toBeUndefined();
      }
    }
  });
});

describe('when a form is posted', () => {
  it('then without the CSRF token of the session it is refused with 403 and nothing changes', async () => {
    const org = await createOrganization(db, { name: 'CSRF test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const client = httpSession(dashboard.url);
    await client.signIn(admin.email, admin.password);
    const missing = await client.post(`/orgs/${org.id}/keys`, { name: 'no token' });
    expect(missing.status).toBe(403);
    expect(await missing.text()).toContain('This form expired');
    const wrong = await client.post(`/orgs/${org.id}/keys`, { _csrf: 'x'.repeat(43), name: 'wrong token' });
    expect(wrong.status).toBe(403);
    expect(await db('api_keys').where({ organization_id: org.id }).first()).toBeUndefined();
    const token = await client.csrf(`/orgs/${org.id}/keys`);
    const ok = await client.post(`/orgs/${org.id}/keys`, { _csrf: token, name: 'with token' });
    expect(ok.status).toBe(303);
    expect(await (await client.get(`/orgs/${org.id}/keys`)).text()).toMatch(/sk_live_[0-9A-Za-z]{32}/);
  });

  it('then the sign-in form itself needs the pre-session token', async () => {
    const res = await httpSession(dashboard.url).post('/sign-in', { email: 'a@example.test', password: 'x' });
    expect(res.status).toBe(403);
  });

  it('then a NUL character in a field, the address or the query is a 400 page that says so, and nothing is written', async () => {
    const org = await createOrganization(db, { name: 'NUL test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const stranger = httpSession(dashboard.url);
    const refusedSignIn = await stranger.post('/sign-in', { _csrf: await stranger.csrf('/sign-in'), email: 'a\u0000@example.test', password: 'x', next: '/' });
    expect(refusedSignIn.status).toBe(400);
    expect(await refusedSignIn.text()).toContain('holds a NUL character (U+0000)');
    const client = httpSession(dashboard.url);
    await client.signIn(admin.email, admin.password);
    const named = await client.post(`/orgs/${org.id}/keys`, { _csrf: await client.csrf(`/orgs/${org.id}/keys`), name: 'bad\u0000name' });
    expect(named.status).toBe(400);
    expect(await db('api_keys').where({ organization_id: org.id }).first()).toBeUndefined();
    for (const path of [`/orgs/${org.id}%00`, `/orgs/${org.id}/ledger?type=%00`, `/invitations/x%00y`]) {
      const res = await client.get(path);
      expect(res.status, path).toBe(400);
      expect(await res.text()).toContain('holds a NUL character (U+0000)');
    }
  });
});

describe('when someone signs out everywhere', () => {
  it('then every session of that person stops working, and other people stay signed in', async () => {
    const org = await createOrganization(db, { name: 'Sign out test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const laptop = httpSession(dashboard.url);
    const phone = httpSession(dashboard.url);
    const colleague = httpSession(dashboard.url);
    const finance = await createMember(db, org.id, 'finance');
    await laptop.signIn(admin.email, admin.password);
    await phone.signIn(admin.email, admin.password);
    await colleague.signIn(finance.email, finance.password);
    expect((await phone.get(`/orgs/${org.id}`)).status).toBe(200);

    const token = await laptop.csrf(`/orgs/${org.id}`);
    const res = await laptop.post('/sign-out-everywhere', { _csrf: token });
    expect(res.status).toBe(302);
    const phoneAfter = await phone.get(`/orgs/${org.id}`);
    expect(phoneAfter.status).toBe(302);
    expect(phoneAfter.headers.get('location')).toMatch(/^\/sign-in\?next=/);
    expect((await laptop.get(`/orgs/${org.id}`)).status).toBe(302);
    expect((await colleague.get(`/orgs/${org.id}`)).status).toBe(200);
  });

  it('then plain sign-out ends only this session', async () => {
    const org = await createOrganization(db, { name: 'Sign out one test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const a = httpSession(dashboard.url);
    const b = httpSession(dashboard.url);
    await a.signIn(admin.email, admin.password);
    await b.signIn(admin.email, admin.password);
    const stolenCookie = a.jar.get('dash_session')!;
    await a.post('/sign-out', { _csrf: await a.csrf(`/orgs/${org.id}`) });
    expect((await b.get(`/orgs/${org.id}`)).status).toBe(200);
    // The old cookie value is dead on the server, not just deleted in the browser.
    const replay = httpSession(dashboard.url);
    replay.jar.set('dash_session', stolenCookie);
    expect((await replay.get(`/orgs/${org.id}`)).status).toBe(302);
  });
});

describe('when roles are checked', () => {
  it('then finance reads reports but gets 403 on keys and members, and non-operators get 404 on operator pages', async () => {
    const org = await createOrganization(db, { name: 'Roles test', planId: 'standard' });
    const finance = await createMember(db, org.id, 'finance');
    const client = httpSession(dashboard.url);
    await client.signIn(finance.email, finance.password);
    for (const path of ['', '/usage', '/report', '/ledger', '/alerts']) expect((await client.get(`/orgs/${org.id}${path}`)).status, path).toBe(200);
    for (const path of ['/keys', '/members', '/activity']) expect((await client.get(`/orgs/${org.id}${path}`)).status, path).toBe(403);
    // A refusal is headed as one, not as a failure.
    const refused = await (await client.get(`/orgs/${org.id}/keys`)).text();
    expect(refused).toMatch(/<h1[^>]*>Not open to your role<\/h1>/);
    expect(refused).not.toContain('Something went wrong');
    const token = await client.csrf(`/orgs/${org.id}/alerts`);
    expect((await client.post(`/orgs/${org.id}/alerts/thresholds`, { _csrf: token, kind: 'percent_used', value: '80' })).status).toBe(403);
    const missing = await client.get('/operator');
    expect(missing.status).toBe(404);
    expect(await missing.text()).toMatch(/<h1[^>]*>Page not found<\/h1>/);
  });

  it('then an operator can open any organization and the operator pages', async () => {
    const org = await createOrganization(db, { name: 'Operator view test', planId: 'standard' });
    const operator = await createOperator(db);
    const client = httpSession(dashboard.url);
    await client.signIn(operator.email, operator.password);
    expect((await client.get('/operator')).status).toBe(200);
    expect((await client.get(`/operator/organizations/${org.id}`)).status).toBe(200);
    expect((await client.get(`/orgs/${org.id}/keys`)).status).toBe(200);
    expect((await client.get('/orgs/org_doesnotexist')).status).toBe(404);
  });

  it('then redirects after sign-in stay on this site', async () => {
    const org = await createOrganization(db, { name: 'Redirect test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const client = httpSession(dashboard.url);
    const token = await client.csrf('/sign-in');
    const res = await client.post('/sign-in', { _csrf: token, email: admin.email, password: admin.password, next: '//evil.example/' });
    expect(res.headers.get('location')).toBe('/');
    expect((await client.get('/language?lang=it&next=https://evil.example/')).headers.get('location')).toBe('/');
  });
});

describe('when the language is switched', () => {
  it('then the choice is remembered in a cookie and pages come in Italian', async () => {
    const client = httpSession(dashboard.url);
    const res = await client.get('/language?lang=it&next=/sign-in');
    expect(res.headers.getSetCookie().find((c) => c.startsWith('dash_lang=it'))).toMatch(/Max-Age=31536000/);
    const page = await (await client.get('/sign-in')).text();
    expect(page).toContain('<html lang="it">');
    expect(page).toContain('Accedi alla dashboard');
  });

  it('then the switch on a page with a query (a month, a page of the ledger, a view) comes back to that very page', async () => {
    const org = await createOrganization(db, { name: 'Language switch query test', planId: 'standard' });
    const admin = await createMember(db, org.id, 'admin');
    const client = httpSession(dashboard.url);
    await client.signIn(admin.email, admin.password);
    const month = new Date().toISOString().slice(0, 7);
    for (const path of [`/orgs/${org.id}/report?period=${month}`, `/orgs/${org.id}/ledger?page=1`, `/orgs/${org.id}/usage?view=key&measure=calls`]) {
      const page = await (await client.get(path)).text();
      // The other language's link: Italian first, English once the cookie says Italian.
      const [, link, lang] = /<a href="(\/language\?lang=(en|it)&amp;next=[^"]+)"/.exec(page) ?? [];
      expect(link?.replaceAll('&amp;', '&'), path).toBe(`/language?lang=${lang}&next=${encodeURIComponent(path)}`);
      expect((await client.get(link!.replaceAll('&amp;', '&'))).headers.get('location')).toBe(path);
    }
  });
});
