import { afterAll, describe, expect, inject, it } from 'vitest';
import { parseConfig } from '../core/config/index.js';
import { createDatabaseProbe } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { composeDashboard } from '../dashboard/compose.js';
import { listen, type RunningServer } from './api-fixtures.js';
import { createOperator, httpSession } from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// X-Forwarded-For is believed only with TRUST_PROXY set: a public address of its own
// (PUBLIC_DASHBOARD_URL, which docker-compose.yml sets while publishing the port directly) says
// nothing about a proxy in front, and without one anyone could write a sign-in attempt's IP.

const db = testDb();
const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await db.destroy();
});

async function dashboardWith(env: Record<string, string>, logger = createLogger({ level: 'silent' })): Promise<RunningServer> {
  const config = parseConfig({ DATABASE_URL: inject('databaseUrl'), PUBLIC_DASHBOARD_URL: 'http://localhost:3002', ...env });
  const database = { db, connectionString: inject('databaseUrl'), embedded: false, probe: createDatabaseProbe(db), close: async () => {}, stopServerNow: async () => {} };
  const composed = await composeDashboard({ config, logger, database, alertIntervalMs: 60_000 });
  cleanups.push(() => composed.close());
  const server = await listen(composed.app);
  cleanups.push(() => server.close());
  return server;
}

async function recordedIp(dashboard: RunningServer): Promise<string | null> {
  const operator = await createOperator(db);
  const client = httpSession(dashboard.url);
  const page = '/sign-in';
  await client.post(page, { _csrf: await client.csrf(page), email: operator.email, password: 'wrong password' }, { 'X-Forwarded-For': '6.6.6.6' });
  const row = await db('sign_in_attempts').whereRaw('lower(email) = ?', [operator.email.toLowerCase()]).first<{ ip: string | null }>('ip');
  return row?.ip ?? null;
}

describe('when a sign-in attempt carries X-Forwarded-For', () => {
  it('then with a public address but no TRUST_PROXY the socket\'s address is recorded', async () => {
    expect(await recordedIp(await dashboardWith({}))).toMatch(/127\.0\.0\.1$/);
  });

  it('then with TRUST_PROXY=true the forwarded address is recorded', async () => {
    expect(await recordedIp(await dashboardWith({ TRUST_PROXY: 'true' }))).toBe('6.6.6.6');
  });
});

describe('when requests come through a proxy the dashboard does not trust', () => {
  const hints = (lines: string[]) => lines.filter((l) => l.includes('X-Forwarded-For') && l.includes('TRUST_PROXY'));

  it('then the first one with X-Forwarded-For makes one warning saying what TRUST_PROXY would change, and with TRUST_PROXY=true none', async () => {
    const lines: string[] = [];
    const untrusted = await dashboardWith({}, createLogger({ level: 'info', write: (line) => lines.push(line) }));
    await fetch(`${untrusted.url}/sign-in`);
    expect(hints(lines)).toEqual([]);
    for (let i = 0; i < 3; i++) await fetch(`${untrusted.url}/sign-in`, { headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(hints(lines)).toHaveLength(1);
    expect(JSON.parse(hints(lines)[0]!)).toMatchObject({ level: 'warn', socketAddress: expect.stringMatching(/127\.0\.0\.1$/) });

    const trustedLines: string[] = [];
    const trusted = await dashboardWith({ TRUST_PROXY: 'true' }, createLogger({ level: 'info', write: (line) => trustedLines.push(line) }));
    await fetch(`${trusted.url}/sign-in`, { headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(hints(trustedLines)).toEqual([]);
  });
});

describe('when the dashboard starts in production', () => {
  it('then an http public address (other than localhost) is warned of, as its session cookies go without Secure; https and localhost are not', async () => {
    const warned = async (publicUrl: string) => {
      const lines: { level: string; msg: string }[] = [];
      const config = parseConfig({ DATABASE_URL: inject('databaseUrl'), NODE_ENV: 'production', PUBLIC_DASHBOARD_URL: publicUrl });
      const database = { db, connectionString: inject('databaseUrl'), embedded: false, probe: createDatabaseProbe(db), close: async () => {}, stopServerNow: async () => {} };
      const composed = await composeDashboard({ config, logger: createLogger({ level: 'info', write: (line) => lines.push(JSON.parse(line)) }), database, alertIntervalMs: 60_000 });
      await composed.close();
      return lines.filter((l) => l.level === 'warn' && l.msg.startsWith('PUBLIC_DASHBOARD_URL is not https')).length;
    };
    expect(await warned('http://dashboard.example.com')).toBe(1);
    expect(await warned('https://dashboard.example.com')).toBe(0);
    expect(await warned('http://localhost:3002')).toBe(0);
  });
});
