import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { hashPassword, hashToken, passwordCheckSlots } from '../core/dashboard-auth/index.js';
import { createMember, dashboardForFile, httpSession, startTestDashboard } from './dashboard-fixtures.js';

// Browsers trusted for an e-mail (OWASP's device cookies), against the real dashboard and
// Postgres: someone who keeps an e-mail locked with wrong passwords does not lock its owner out
// of a browser they signed in with before, while that browser's own wrong passwords, forged or
// borrowed cookies, and browsers never signed in with get nothing past the lock.

// Five failures lock an e-mail for unknown browsers; a trusted browser has three of its own.
// Enough password-check places that the bursts below are never turned away as busy. Behind a
// trusted proxy, so the attacker's requests come from an address of their own.
const slots = passwordCheckSlots({ running: 1, queued: 40, maxWaitMs: 30_000, perAddress: 40 });
// The attacker sends every wrong password from one address, across the file's tests: the
// per-address budget (test/dashboard-sign-in-spraying.test.ts) is out of the way here.
const env = dashboardForFile({ trustProxy: true, signInLimits: { maxFailures: 5, maxDeviceFailures: 3, maxAddressFailures: Number.MAX_SAFE_INTEGER, windowMs: 15 * 60 * 1000, passwordChecks: slots } });

type Client = ReturnType<typeof httpSession>;
const ATTACKER = { 'x-forwarded-for': '203.0.113.66' };
const LOCKED = 'Too many attempts for this e-mail';
const UNKNOWN_BROWSER_HINT = 'A browser you have signed in with before is not locked';
const LOST_TRUST = 'This browser is no longer trusted for this e-mail';

async function person(role: 'admin' | 'finance' = 'admin') {
  const org = await createOrganization(env.db, { name: `Device trust ${role}`, planId: 'standard' });
  return createMember(env.db, org.id, role);
}

/** A browser that signed in as `who` and signed out again (or whose 12-hour session ended). */
async function browserSignedInBefore(who: { email: string; password: string }): Promise<Client> {
  const browser = httpSession(env.dashboard.url);
  expect((await browser.signIn(who.email, who.password)).status).toBe(302);
  expect((await browser.post('/sign-out', { _csrf: await browser.csrf('/orgs') })).status).toBe(302);
  expect(browser.jar.has('dash_session')).toBe(false);
  return browser;
}

/** Wrong passwords for `email` from a browser that never signed in with it, until it is locked. */
async function lockOut(email: string): Promise<void> {
  const attacker = httpSession(env.dashboard.url);
  const token = await attacker.csrf('/sign-in');
  const attempt = () => attacker.post('/sign-in', { _csrf: token, email, password: `guess ${randomBytes(4).toString('hex')}`, next: '/' }, ATTACKER);
  for (let i = 0; i < 5; i++) expect((await attempt()).status).toBe(401);
  expect((await attempt()).status).toBe(429);
}

/** The device cookie's entry naming `email` with `secret`, as dashboard/device-cookie.ts writes it. */
const deviceEntry = (email: string, secret: string) => `${Buffer.from(email.toLowerCase()).toString('base64url')}.${secret}`;

/** The secret `browser`'s device cookie holds for `email`. */
function secretFor(browser: Client, email: string): string {
  const cookie = decodeURIComponent(browser.jar.get('dash_device') ?? '');
  const entry = cookie.split('~').find((e) => e.startsWith(`${Buffer.from(email.toLowerCase()).toString('base64url')}.`));
  if (!entry) throw new Error(`no device entry for ${email}`);
  return entry.split('.')[1]!;
}

describe('when an attacker keeps an e-mail locked from another client', () => {
  it("then the owner's browser that signed in before still signs in with the right password, and an unknown browser is still locked", async () => {
    const owner = await person();
    const laptop = await browserSignedInBefore(owner);
    await lockOut(owner.email);

    const signedIn = await laptop.signIn(owner.email, owner.password);
    expect(signedIn.status).toBe(302);
    expect(laptop.jar.has('dash_session')).toBe(true);

    const stranger = httpSession(env.dashboard.url);
    const refused = await stranger.signIn(owner.email, owner.password);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const page = await refused.text();
    expect(page).toContain(LOCKED);
    expect(page).toContain(UNKNOWN_BROWSER_HINT);
    expect(stranger.jar.has('dash_session')).toBe(false);
  });

  it("then the owner's success from a trusted browser does not open a fresh window for the attacker", async () => {
    const owner = await person('finance');
    const laptop = await browserSignedInBefore(owner);
    await lockOut(owner.email);
    expect((await laptop.signIn(owner.email, owner.password)).status).toBe(302);

    const attacker = httpSession(env.dashboard.url);
    expect((await attacker.post('/sign-in', { _csrf: await attacker.csrf('/sign-in'), email: owner.email, password: owner.password, next: '/' }, ATTACKER)).status).toBe(429);
    // Still exactly the five failures of the lock, none checked since.
    const untrusted = await env.db('sign_in_attempts').whereRaw('lower(email) = ?', [owner.email.toLowerCase()]).whereNull('device_id_hash').select('succeeded');
    expect(untrusted.filter((r: { succeeded: boolean }) => !r.succeeded)).toHaveLength(5);
  });

  it('then a person with several browsers signs in from each of them, and a copy of a cookie the browser has since replaced gets nothing', async () => {
    const owner = await person();
    const laptop = await browserSignedInBefore(owner);
    const phone = await browserSignedInBefore(owner);
    const oldLaptopCookie = laptop.jar.get('dash_device')!;
    await lockOut(owner.email);

    expect((await phone.signIn(owner.email, owner.password)).status).toBe(302);
    expect((await laptop.signIn(owner.email, owner.password)).status).toBe(302);
    expect(laptop.jar.get('dash_device')).not.toBe(oldLaptopCookie);

    const copy = httpSession(env.dashboard.url);
    copy.jar.set('dash_device', oldLaptopCookie);
    expect((await copy.signIn(owner.email, owner.password)).status).toBe(429);
  });

  it('then colleagues who share a browser both keep it trusted', async () => {
    const admin = await person('admin');
    const finance = await person('finance');
    const shared = await browserSignedInBefore(admin);
    expect((await shared.signIn(finance.email, finance.password)).status).toBe(302);
    await shared.post('/sign-out', { _csrf: await shared.csrf('/orgs') });
    await lockOut(admin.email);
    await lockOut(finance.email);

    expect((await shared.signIn(admin.email, admin.password)).status).toBe(302);
    await shared.post('/sign-out', { _csrf: await shared.csrf('/orgs') });
    expect((await shared.signIn(finance.email, finance.password)).status).toBe(302);
  });
});

describe('when a trusted browser sends wrong passwords', () => {
  it('then it has three of its own, after which it is trusted no more and the lock applies to it, saying why', async () => {
    const owner = await person();
    const laptop = await browserSignedInBefore(owner);
    const secret = secretFor(laptop, owner.email);
    await lockOut(owner.email);

    for (let i = 0; i < 3; i++) expect((await laptop.signIn(owner.email, `wrong ${i}`)).status).toBe(401);
    const refused = await laptop.signIn(owner.email, owner.password);
    expect(refused.status).toBe(429);
    const page = await refused.text();
    expect(page).toContain(LOCKED);
    expect(page).toContain(LOST_TRUST);
    expect(await env.db('trusted_devices').where({ id_hash: hashToken(secret) }).first()).toBeUndefined();
  });

  it('then of twenty sent at once three are checked, and the right password after them is refused', async () => {
    const owner = await person();
    const laptop = await browserSignedInBefore(owner);
    await lockOut(owner.email);
    const token = await laptop.csrf('/sign-in');
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => laptop.post('/sign-in', { _csrf: token, email: owner.email, password: `wrong ${i}`, next: '/' }).then((r) => r.status)),
    );
    expect(answers.filter((s) => s === 401)).toHaveLength(3);
    expect(answers.filter((s) => s === 429)).toHaveLength(17);
    const fromLaptop = await env.db('sign_in_attempts').whereRaw('lower(email) = ?', [owner.email.toLowerCase()]).whereNotNull('device_id_hash').count<{ count: string }[]>({ count: '*' });
    expect(Number(fromLaptop[0]!.count)).toBe(3);
    expect((await laptop.signIn(owner.email, owner.password)).status).toBe(429);
  });

  it("then they do not count towards the e-mail's lock on other browsers", async () => {
    const owner = await person();
    const laptop = await browserSignedInBefore(owner);
    // Four failures from elsewhere: one more of any kind, counted on the e-mail, would lock it.
    const attacker = httpSession(env.dashboard.url);
    const token = await attacker.csrf('/sign-in');
    for (let i = 0; i < 4; i++) expect((await attacker.post('/sign-in', { _csrf: token, email: owner.email, password: `guess ${i}`, next: '/' }, ATTACKER)).status).toBe(401);
    for (let i = 0; i < 3; i++) expect((await laptop.signIn(owner.email, `wrong ${i}`)).status).toBe(401);
    expect((await httpSession(env.dashboard.url).signIn(owner.email, owner.password)).status).toBe(302);
  });
});

describe('when a browser presents a device cookie it was not given for that e-mail', () => {
  it('then a forged secret, another person\'s secret or another person\'s entry gives no way past the lock', async () => {
    const victim = await person();
    const attacker = await person();
    const attackersBrowser = await browserSignedInBefore(attacker);
    await lockOut(victim.email);

    const forged = httpSession(env.dashboard.url);
    forged.jar.set('dash_device', deviceEntry(victim.email, randomBytes(32).toString('base64url')));
    expect((await forged.signIn(victim.email, victim.password)).status).toBe(429);

    const borrowed = httpSession(env.dashboard.url);
    borrowed.jar.set('dash_device', deviceEntry(victim.email, secretFor(attackersBrowser, attacker.email)));
    expect((await borrowed.signIn(victim.email, victim.password)).status).toBe(429);

    // The attacker's own browser, trusted for the attacker's e-mail only.
    expect((await attackersBrowser.signIn(victim.email, victim.password)).status).toBe(429);
    // Nothing was counted on the attacker's browser for the victim's e-mail.
    expect(await env.db('sign_in_attempts').whereRaw('lower(email) = ?', [victim.email.toLowerCase()]).whereNotNull('device_id_hash').first()).toBeUndefined();
  });
});

describe('when the person behind a trusted browser changes', () => {
  it('then after a new password their browsers are trusted no more', async () => {
    const owner = await person();
    const laptop = await browserSignedInBefore(owner);
    // As `cli operator reset-password` or an accepted invitation set one: straight in the table.
    const newPassword = `new-${randomBytes(8).toString('hex')}`;
    await env.db('users').where({ id: owner.userId }).update({ password_hash: await hashPassword(newPassword) });
    await lockOut(owner.email);
    const refused = await laptop.signIn(owner.email, newPassword);
    expect(refused.status).toBe(429);
    expect(await refused.text()).toContain(LOST_TRUST);
  });

  it('then a disabled account\'s browsers are trusted no more', async () => {
    const owner = await person();
    const laptop = await browserSignedInBefore(owner);
    await lockOut(owner.email);
    await env.db('users').where({ id: owner.userId }).update({ disabled_at: new Date() });
    // Locked, not checked: the browser is one more unknown one.
    expect((await laptop.signIn(owner.email, owner.password)).status).toBe(429);
  });

  it('then signing out everywhere leaves only this browser trusted', async () => {
    const owner = await person();
    const lost = await browserSignedInBefore(owner);
    const laptop = httpSession(env.dashboard.url);
    expect((await laptop.signIn(owner.email, owner.password)).status).toBe(302);
    expect((await laptop.post('/sign-out-everywhere', { _csrf: await laptop.csrf('/orgs') })).status).toBe(302);
    await lockOut(owner.email);

    expect((await lost.signIn(owner.email, owner.password)).status).toBe(429);
    expect((await laptop.signIn(owner.email, owner.password)).status).toBe(302);
  });
});

describe('when a browser is trusted', () => {
  it('then its cookie is HttpOnly, SameSite=Strict and long-lived, and the table holds only its hash', async () => {
    const owner = await person();
    const browser = httpSession(env.dashboard.url);
    const res = await browser.signIn(owner.email, owner.password);
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith('dash_device='))!;
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).not.toMatch(/; Secure/);
    expect(Number(/Max-Age=(\d+)/.exec(cookie)![1])).toBeGreaterThan(89 * 86_400);
    const secret = secretFor(browser, owner.email);
    const rows = await env.db('trusted_devices').where({ user_id: owner.userId }).select('id_hash');
    expect(rows).toEqual([{ id_hash: hashToken(secret) }]);
  });

  it('then over https its cookie is also Secure', async () => {
    const secure = await startTestDashboard(env.db, { secureCookies: true });
    try {
      const owner = await person();
      const res = await httpSession(secure.url).signIn(owner.email, owner.password);
      expect(res.headers.getSetCookie().find((c) => c.startsWith('dash_device='))).toMatch(/; Secure/);
    } finally {
      await secure.close();
    }
  });
});
