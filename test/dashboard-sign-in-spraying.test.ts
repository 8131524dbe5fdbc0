import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createOperator, dashboardForFile, httpSession, uniqueEmail } from './dashboard-fixtures.js';

// Password spraying: one client address trying a password at many e-mails, each e-mail far
// below its own lock. The dashboard counts the failures of each public client address from
// browsers not trusted for the e-mail tried (maxAddressFailures, 3 here), whatever the e-mails;
// past it that address is refused before any password is checked, while other addresses and
// browsers trusted for their e-mail still sign in. Behind a trusted proxy, so each request
// says which client it comes from (X-Forwarded-For).
const env = dashboardForFile({ trustProxy: true, signInLimits: { maxFailures: 5, maxAddressFailures: 3, windowMs: 15 * 60 * 1000 } });

/** A public client address of its own, on every run (3fff::/20: IPv6 documentation space, which the dashboard counts as public). */
const newAddress = () => `3fff:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}::1`;

type Session = ReturnType<typeof httpSession>;

async function signInFrom(client: Session, from: string, email: string, password: string, language = 'en') {
  const res = await client.post('/sign-in', { _csrf: await client.csrf('/sign-in'), email, password, next: '/' }, { 'x-forwarded-for': from, 'accept-language': language });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
}

/** `n` wrong passwords from `from`, each for an e-mail of its own (none of them near its lock). */
async function spray(from: string, n: number) {
  for (let i = 0; i < n; i++) expect((await signInFrom(httpSession(env.dashboard.url), from, uniqueEmail('sprayed'), 'Summer2026!!!')).status).toBe(401);
}

describe('when one address sends wrong passwords for many e-mails', () => {
  it('then past the budget it is refused 429 for any e-mail, the right password included, saying so; another address is not', async () => {
    const operator = await createOperator(env.db);
    const sprayer = newAddress();
    await spray(sprayer, 3);

    const refused = await signInFrom(httpSession(env.dashboard.url), sprayer, operator.email, operator.password);
    expect(refused.status).toBe(429);
    expect(Number(refused.retryAfter)).toBeGreaterThan(14 * 60);
    expect(refused.body).toContain('Too many failed sign-ins from your network. Try again in 15 min.');
    // Refused before a password check: the attempt left no row, and the e-mail is not locked by it.
    expect(await env.db('sign_in_attempts').whereRaw('lower(email) = ?', [operator.email.toLowerCase()])).toHaveLength(0);
    const italian = await signInFrom(httpSession(env.dashboard.url), sprayer, operator.email, operator.password, 'it');
    expect(italian.body).toContain('Troppi accessi non riusciti dalla tua rete. Riprova tra 15 min.');

    expect((await signInFrom(httpSession(env.dashboard.url), newAddress(), operator.email, operator.password)).status).toBe(302);
  });

  it('then a browser trusted for its e-mail still signs in from that address', async () => {
    const operator = await createOperator(env.db);
    const shared = newAddress();
    const browser = httpSession(env.dashboard.url);
    // Signed in before from this address: the browser is trusted for the e-mail (device cookie).
    expect((await signInFrom(browser, shared, operator.email, operator.password)).status).toBe(302);
    await spray(shared, 3);
    expect((await signInFrom(httpSession(env.dashboard.url), shared, operator.email, operator.password)).status).toBe(429);
    // The same browser later, signed out: its device cookie kept, its session gone.
    const later = httpSession(env.dashboard.url);
    for (const [name, value] of browser.jar) if (name !== 'dash_session') later.jar.set(name, value);
    expect(later.jar.size).toBeGreaterThan(0);
    expect((await signInFrom(later, shared, operator.email, operator.password)).status).toBe(302);
  });

  it('then an IPv6 client is counted by its /64, whichever addresses of it it uses, and an IPv4 address the same however written', async () => {
    const operator = await createOperator(env.db);
    const network = `3fff:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`;
    for (const from of [`${network}::1`, `${network}:0:0:0:2`, `${network}:ffff:ffff:ffff:fffe`]) await spray(from, 1);
    expect((await signInFrom(httpSession(env.dashboard.url), `${network}:1234::9`, operator.email, operator.password)).status).toBe(429);
    // The next /64 is someone else's.
    const next = `${network.slice(0, network.lastIndexOf(':'))}:${(parseInt(network.slice(network.lastIndexOf(':') + 1), 16) ^ 1).toString(16)}`;
    expect((await signInFrom(httpSession(env.dashboard.url), `${next}::1`, operator.email, operator.password)).status).toBe(302);

    // 198.51.100.0/24 is documentation space, which the dashboard counts as public; its last byte is this run's own.
    const v4 = `198.51.100.${randomBytes(1)[0]}`;
    await env.db('sign_in_attempts').where({ address_block: v4 }).delete();
    await spray(v4, 2);
    await spray(`::ffff:${v4}`, 1);
    expect((await signInFrom(httpSession(env.dashboard.url), v4, operator.email, operator.password)).status).toBe(429);
    await env.db('sign_in_attempts').where({ address_block: v4 }).delete();
  });

  it('then a private address (most likely a proxy in front of everyone) is not counted', async () => {
    const operator = await createOperator(env.db);
    const proxy = '10.1.2.3';
    await spray(proxy, 4);
    expect((await signInFrom(httpSession(env.dashboard.url), proxy, operator.email, operator.password)).status).toBe(302);
  });
});
