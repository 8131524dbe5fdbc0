import { describe, expect, it } from 'vitest';
import { passwordCheckSlots } from '../core/dashboard-auth/index.js';
import { createOperator, dashboardForFile, httpSession, uniqueEmail } from './dashboard-fixtures.js';

// Sign-in limits under concurrency, against the real dashboard and Postgres: guesses sent at
// once are counted as if sent one by one, and a flood of sign-ins never runs more password
// checks at once than the process's slots allow.

// One check at a time, four waiting, two per client address: a guessing burst's five checks all
// fit (so none of them is turned away as busy), and a flood of random e-mails overflows at once.
// The long wait keeps a slow test machine from turning waiters away. Behind a trusted proxy, so
// each request can say which client it comes from (X-Forwarded-For).
const slots = passwordCheckSlots({ running: 1, queued: 4, maxWaitMs: 20_000, perAddress: 2 });
const env = dashboardForFile({ trustProxy: true, signInLimits: { maxFailures: 5, windowMs: 15 * 60 * 1000, passwordChecks: slots } });

let lastAddress = 0;
/** A client address of its own (TEST-NET-2). */
const newAddress = () => `198.51.${Math.floor(++lastAddress / 250)}.${lastAddress % 250 + 1}`;

/** Sends every sign-in at once, on one pre-session (its CSRF token and cookie), each from an address of its own unless told. */
async function signInAtOnce(attempts: { email: string; password: string; language?: 'en' | 'it'; from?: string }[]) {
  const client = httpSession(env.dashboard.url);
  const token = await client.csrf('/sign-in');
  return Promise.all(
    attempts.map(async ({ email, password, language = 'en', from = newAddress() }) => {
      const started = performance.now();
      const res = await client.post('/sign-in', { _csrf: token, email, password, next: '/' }, { 'accept-language': language, 'x-forwarded-for': from });
      return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text(), ms: performance.now() - started, language };
    }),
  );
}

const count = (answers: { status: number }[], status: number) => answers.filter((a) => a.status === status).length;

describe('when 40 guesses at one password arrive at once', () => {
  it('then at most 5 passwords are checked, and the right one among them is refused once the e-mail is locked', async () => {
    const operator = await createOperator(env.db);
    const guesses = Array.from({ length: 40 }, (_, i) => ({ email: operator.email, password: i === 19 ? operator.password : `wrong guess ${i}` }));
    const answers = await signInAtOnce(guesses);

    const checked = count(answers, 401) + count(answers, 302);
    expect(checked).toBeLessThanOrEqual(5);
    expect(count(answers, 429)).toBe(40 - checked);
    expect(answers[19]!.status).toBe(429);
    for (const locked of answers.filter((a) => a.status === 429)) {
      expect(Number(locked.retryAfter)).toBeGreaterThan(0);
      expect(locked.body).toContain('Too many attempts for this e-mail');
    }
    const rows = await env.db('sign_in_attempts').whereRaw('lower(email) = ?', [operator.email.toLowerCase()]).select('succeeded');
    expect(rows).toHaveLength(checked);
    expect(rows.every((r: { succeeded: boolean }) => !r.succeeded)).toBe(true);

    // And afterwards, one at a time, still locked.
    expect((await httpSession(env.dashboard.url).signIn(operator.email, operator.password)).status).toBe(429);
  });

  it('then an unknown e-mail is limited the same way', async () => {
    const email = uniqueEmail('nobody');
    const answers = await signInAtOnce(Array.from({ length: 20 }, (_, i) => ({ email, password: `guess ${i}` })));
    expect(count(answers, 401)).toBeLessThanOrEqual(5);
    expect(count(answers, 429)).toBe(20 - count(answers, 401));
  });
});

describe('when a flood of sign-ins with random e-mails arrives at once', () => {
  it('then one client address gets only its share of the queue, and someone else still gets a place', async () => {
    const flooder = newAddress();
    const flood = signInAtOnce(Array.from({ length: 10 }, () => ({ email: uniqueEmail('flood'), password: 'a guess', from: flooder })));
    // Once the flood's requests are in (without the share they would fill all five places).
    await new Promise((resolve) => setTimeout(resolve, 100));
    const [someoneElse] = await signInAtOnce([{ email: uniqueEmail('someone'), password: 'a guess' }]);
    const answers = await flood;
    expect(count(answers, 401)).toBeLessThanOrEqual(2);
    expect(count(answers, 429)).toBe(10 - count(answers, 401));
    expect(someoneElse!.status).toBe(401);
  });

  it('then those beyond the queue get 429 with Retry-After at once, in the page language, the others are checked one at a time', async () => {
    const flood = Array.from({ length: 30 }, (_, i) => ({ email: uniqueEmail('flood'), password: 'a guess', language: i % 2 ? ('it' as const) : ('en' as const) }));
    const answers = await signInAtOnce(flood);

    const accepted = answers.filter((a) => a.status === 401);
    const busy = answers.filter((a) => a.status === 429);
    expect(accepted.length + busy.length).toBe(30);
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(busy.length).toBeGreaterThanOrEqual(20);
    for (const answer of busy) {
      expect(answer.retryAfter).toBe('20');
      expect(answer.body).toContain(answer.language === 'it' ? 'Il servizio è impegnato con molti accessi' : 'The service is busy signing people in');
    }
    // Turned away without waiting for the checks ahead of them.
    expect(Math.max(...busy.map((a) => a.ms))).toBeLessThan(Math.max(...accepted.map((a) => a.ms)));
    expect(slots.peakRunning).toBe(1);
    expect(slots.running).toBe(0);

    // Only the checked attempts are rows; a busy answer counts against no one.
    const rows = await env.db('sign_in_attempts').whereIn('email', flood.map((f) => f.email)).count<{ count: string }[]>({ count: '*' });
    expect(Number(rows[0]!.count)).toBe(accepted.length);

    // Afterwards, a person signs in as usual.
    const operator = await createOperator(env.db);
    expect((await httpSession(env.dashboard.url).signIn(operator.email, operator.password)).status).toBe(302);
  });
});
