import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../core/config/index.js';
import { defaultSignInLimits, hashToken, pruneSignInRows } from '../core/dashboard-auth/index.js';
import { createDatabaseProbe, createDb, migrateLatest, type Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { composeDashboard, type ComposedDashboard } from '../dashboard/compose.js';
import { listen, type RunningServer } from './api-fixtures.js';
import { createOperator, httpSession } from './dashboard-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// The dashboard deletes the sign-in rows nothing reads any more (sign_in_attempts, sessions,
// trusted_devices), and only those: the real dashboard composed as main.ts and `npm start`
// compose it, over HTTP. A database of this file's own: a prune sweeps the whole table, and
// each count below is exact.

interface LogLine { level: string; msg: string; [field: string]: unknown }

let scratch: ScratchDatabase;
let db: Db;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  scratch = await createScratchDatabase('prune');
  db = createDb({ connectionString: scratch.url, poolMax: 6 });
  await migrateLatest(db);
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await db?.destroy();
  await scratch?.drop();
});

async function dashboardPruningEvery(pruneIntervalMs: number): Promise<{ composed: ComposedDashboard; server: RunningServer; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const config = parseConfig({ DATABASE_URL: scratch.url });
  const database = { db, connectionString: scratch.url, embedded: false, probe: createDatabaseProbe(db), close: async () => {}, stopServerNow: async () => {} };
  const logger = createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line) as LogLine) });
  const composed = await composeDashboard({ config, logger, database, alertIntervalMs: 60_000, pruneIntervalMs });
  cleanups.push(() => composed.close());
  const server = await listen(composed.app);
  cleanups.push(() => server.close());
  return { composed, server, lines };
}

const MINUTE = 60_000;
const ago = (ms: number) => new Date(Date.now() - ms);
const pruned = (lines: LogLine[]) => lines.filter((l) => l.msg === 'old sign-in rows pruned');
const userIdOf = async (email: string) => (await db('users').where({ email }).first<{ id: string }>('id')).id;
const attemptsOf = (email: string) => db('sign_in_attempts').where({ email: email.toLowerCase() }).orderBy('id').select<{ id: string; succeeded: boolean; device_id_hash: string | null }[]>('id', 'succeeded', 'device_id_hash');

/** A wrong password, then `tries` more, as a browser sends them: each with the page's token. */
async function wrongPasswords(client: ReturnType<typeof httpSession>, email: string, tries: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < tries; i++) statuses.push((await client.signIn(email, `wrong ${randomBytes(4).toString('hex')}`)).status);
  return statuses;
}

describe('when the dashboard prunes sign-in rows', () => {
  let env: { composed: ComposedDashboard; server: RunningServer; lines: LogLine[] };
  beforeAll(async () => {
    // Hourly, as in production: the tests run it themselves (runOnce), after the run at start.
    env = await dashboardPruningEvery(60 * MINUTE);
  });
  // What the tests before left to prune goes first: each test counts only its own rows.
  beforeEach(async () => {
    await env.composed.pruner.runOnce();
  });

  it("then an untrusted browser's attempts past the lock's window are deleted, and those inside it still lock the e-mail", async () => {
    const operator = await createOperator(db);
    const email = operator.email.toLowerCase();
    const window = defaultSignInLimits.windowMs;
    // Four failures just inside the window, three (and an older success) just outside it.
    await db('sign_in_attempts').insert([
      ...[1, 2, 3, 4].map(() => ({ email, ip: '192.0.2.1', succeeded: false, at: ago(window - 2 * MINUTE) })),
      ...[1, 2, 3].map(() => ({ email, ip: '192.0.2.1', succeeded: false, at: ago(window + 2 * MINUTE) })),
      { email, ip: '192.0.2.1', succeeded: true, at: ago(window + 5 * MINUTE) },
    ]);

    expect(await env.composed.pruner.runOnce()).toEqual({ signInAttempts: 4, sessions: 0, trustedDevices: 0 });
    expect(await attemptsOf(email)).toHaveLength(4);

    // The fifth failure inside the window locks the e-mail: the right password is not checked.
    const browser = httpSession(env.server.url);
    expect(await wrongPasswords(browser, email, 1)).toEqual([401]);
    const locked = await browser.signIn(operator.email, operator.password);
    expect(locked.status).toBe(429);
    expect(browser.jar.has('dash_session')).toBe(false);
  });

  it("then a trusted browser's failures are kept past the lock's window for as long as it is trusted: its budget is not refilled", async () => {
    const operator = await createOperator(db);
    const email = operator.email.toLowerCase();
    const laptop = httpSession(env.server.url);
    expect((await laptop.signIn(operator.email, operator.password)).status).toBe(302);
    laptop.jar.delete('dash_session');
    // Two of its five wrong passwords, a day ago: long out of the lock's window, well inside the
    // 90 days the browser stays trusted.
    expect(await wrongPasswords(laptop, email, 2)).toEqual([401, 401]);
    await db('sign_in_attempts').where({ email }).whereNotNull('device_id_hash').update({ at: ago(24 * 60 * MINUTE) });

    expect(await env.composed.pruner.runOnce()).toMatchObject({ signInAttempts: 0 });
    expect((await attemptsOf(email)).filter((a) => a.device_id_hash !== null)).toHaveLength(2);

    // Someone else locks the e-mail; the laptop is still trusted, for three more wrong passwords.
    const attacker = httpSession(env.server.url);
    expect(await wrongPasswords(attacker, email, 6)).toEqual([401, 401, 401, 401, 401, 429]);
    expect(await wrongPasswords(laptop, email, 3)).toEqual([401, 401, 401]);
    // Its five spent, it is trusted no more, and the lock applies to it too.
    expect((await laptop.signIn(operator.email, operator.password)).status).toBe(429);
  });

  it('then rows nothing reads are deleted (ended sessions, expired trusted browsers, attempts of browsers no longer trusted), live sessions still work, and the run says what it deleted', async () => {
    const operator = await createOperator(db);
    const email = operator.email.toLowerCase();
    const userId = await userIdOf(operator.email);
    const browser = httpSession(env.server.url);
    expect((await browser.signIn(operator.email, operator.password)).status).toBe(302);
    const firstSession = browser.jar.get('dash_session')!;
    browser.jar.delete('dash_session');
    // Two wrong passwords and a right one from the trusted browser: it is trusted afresh under a
    // new secret, and the three attempts of the old one are read by nothing any more.
    expect(await wrongPasswords(browser, email, 2)).toEqual([401, 401]);
    expect((await browser.signIn(operator.email, operator.password)).status).toBe(302);
    const [device] = await db('trusted_devices').where({ user_id: userId }).pluck('id_hash');
    // A browser whose trust ran out, with a wrong password it sent while trusted.
    const expiredDevice = hashToken(randomBytes(32).toString('base64url'));
    await db('trusted_devices').insert({ id_hash: expiredDevice, user_id: userId, password_digest: 'x', created_at: ago(91 * 24 * 60 * MINUTE), expires_at: ago(MINUTE) });
    await db('sign_in_attempts').insert({ email, succeeded: false, at: ago(60 * 24 * 60 * MINUTE), device_id_hash: expiredDevice });
    // Sessions that ended more than an hour ago go; those that ended less than an hour ago stay.
    const session = (fields: { expires_at: Date; revoked_at?: Date }) => ({ id_hash: hashToken(randomBytes(32).toString('base64url')), user_id: userId, csrf_token: 'x', created_at: ago(13 * 60 * MINUTE), ...fields });
    const gone = [session({ expires_at: ago(61 * MINUTE) }), session({ expires_at: new Date(Date.now() + 60 * MINUTE), revoked_at: ago(61 * MINUTE) })];
    const kept = [session({ expires_at: ago(59 * MINUTE) }), session({ expires_at: new Date(Date.now() + 60 * MINUTE), revoked_at: ago(59 * MINUTE) })];
    await db('sessions').insert([...gone, ...kept]);
    const linesBefore = pruned(env.lines).length;

    expect(await env.composed.pruner.runOnce()).toEqual({ signInAttempts: 4, sessions: 2, trustedDevices: 1 });

    const logged = pruned(env.lines).slice(linesBefore);
    expect(logged).toEqual([expect.objectContaining({ level: 'info', component: 'sign-in-pruner', signInAttempts: 4, sessions: 2, trustedDevices: 1 })]);
    expect(await db('trusted_devices').where({ user_id: userId }).pluck('id_hash')).toEqual([device]);
    expect((await attemptsOf(email)).map((a) => [a.succeeded, a.device_id_hash])).toEqual([[true, null]]);
    expect((await db('sessions').where({ user_id: userId }).pluck('id_hash')).sort()).toEqual(
      [hashToken(firstSession), hashToken(browser.jar.get('dash_session')!), ...kept.map((s) => s.id_hash)].sort(),
    );
    // Both live sessions still open the operator's pages.
    expect((await browser.get('/operator')).status).toBe(200);
    const first = httpSession(env.server.url);
    first.jar.set('dash_session', firstSession);
    expect((await first.get('/operator')).status).toBe(200);

    // A run that deletes nothing says nothing.
    expect(await env.composed.pruner.runOnce()).toEqual({ signInAttempts: 0, sessions: 0, trustedDevices: 0 });
    expect(pruned(env.lines).slice(linesBefore)).toHaveLength(1);
  });
});

describe('when two replicas prune at once', () => {
  it('then each old row is deleted once, by one of them, in batches, and no row still read goes', async () => {
    const email = `flood-${randomBytes(4).toString('hex')}@example.test`;
    const old = ago(defaultSignInLimits.windowMs + MINUTE);
    await db.raw('INSERT INTO sign_in_attempts (email, succeeded, at) SELECT ?, false, ? FROM generate_series(1, 6000)', [email, old]);
    await db.raw('INSERT INTO sign_in_attempts (email, succeeded, at) SELECT ?, false, now() FROM generate_series(1, 20)', [email]);

    const replica = () => pruneSignInRows(db, { limits: defaultSignInLimits, batchSize: 500 });
    const [a, b] = await Promise.all([replica(), replica()]);

    expect(a.signInAttempts + b.signInAttempts).toBe(6000);
    expect(await attemptsOf(email)).toHaveLength(20);
  });
});

describe('when the dashboard runs', () => {
  it('then it prunes at start and then on its timer, and after close no run starts any more', async () => {
    const email = `timer-${randomBytes(4).toString('hex')}@example.test`;
    const oldAttempt = async () => {
      const [row] = await db('sign_in_attempts').insert({ email, succeeded: false, at: ago(defaultSignInLimits.windowMs + MINUTE) }).returning('id');
      return (row as { id: string }).id;
    };
    const exists = async (id: string) => (await db('sign_in_attempts').where({ id }).first()) !== undefined;
    const gone = async (id: string) => {
      const until = Date.now() + 20_000;
      while (await exists(id)) {
        if (Date.now() > until) return false;
        await new Promise((r) => setTimeout(r, 50));
      }
      return true;
    };

    const atStart = await oldAttempt();
    const { composed, lines } = await dashboardPruningEvery(200);
    expect(await gone(atStart)).toBe(true);
    expect(await gone(await oldAttempt())).toBe(true);
    // A run logs once it has finished every table, a moment after its first DELETE is visible.
    await expect.poll(() => pruned(lines).length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);

    await composed.close();
    const linesAtClose = lines.length;
    const afterClose = await oldAttempt();
    // Fifteen intervals and more: a timer still running would have deleted it.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await exists(afterClose)).toBe(true);
    expect(lines.length).toBe(linesAtClose);
    await db('sign_in_attempts').where({ id: afterClose }).delete();
  });
});
