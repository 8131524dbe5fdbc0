import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDefaultPlans } from '../core/billing/index.js';
import type { Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import type { RunningServer } from './api-fixtures.js';
import { adminOfNewOrg, httpSession, startTestDashboard } from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// The dashboard writes the API's request log: one JSON line per request, with the X-Request-Id
// its answer carries, and who asked once signed in. Before, only a 5xx was logged: a refused
// sign-in left no trace and no id to quote. Nothing secret is written: no password, no e-mail
// typed, no cookie, no query string, no invitation or reset token of a link's path.

const lines: Record<string, unknown>[] = [];
const raw: string[] = [];
const env = {} as { db: Db; dashboard: RunningServer };
beforeAll(async () => {
  env.db = testDb();
  await ensureDefaultPlans(env.db);
  env.dashboard = await startTestDashboard(env.db, {
    logger: createLogger({ level: 'info', write: (line) => { raw.push(line); lines.push(JSON.parse(line) as Record<string, unknown>); } }),
  });
});
afterAll(async () => {
  await env.dashboard?.close();
  await env.db?.destroy();
});

const linesOf = (res: Response) => lines.filter((l) => l.msg === 'request' && l.requestId === res.headers.get('x-request-id'));

describe('the dashboard request log', () => {
  it('when a sign-in is posted without its form then the 403 is one line with its X-Request-Id, and neither the e-mail nor the password is written', async () => {
    const password = `pw-${randomUUID()}`;
    const res = await fetch(`${env.dashboard.url}/sign-in?next=%2Fsecret-query`, {
      method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `email=a%40b.c&password=${password}`,
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    expect(linesOf(res)).toEqual([expect.objectContaining({ level: 'info', method: 'POST', path: '/sign-in', status: 403, ms: expect.any(Number) })]);
    expect(linesOf(res)[0]).not.toHaveProperty('userId');
    const all = raw.join('\n');
    for (const secret of [password, 'a@b.c', 'secret-query']) expect(all).not.toContain(secret);
  });

  it('when invitation and reset links are opened then their tokens are redacted from the logged path', async () => {
    const token = randomUUID().replaceAll('-', '');
    for (const path of [`/invitations/${token}`, `/password-reset/${token}`]) {
      const res = await fetch(`${env.dashboard.url}${path}?t=${token}`, { redirect: 'manual' });
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(linesOf(res)).toEqual([expect.objectContaining({ path: path.replace(token, '[redacted]'), status: res.status })]);
    }
    expect(raw.join('\n')).not.toContain(token);
  });

  it('when a signed-in admin opens their organization then the line names the user and the organization, and no cookie', async () => {
    const { orgId, adminId, client } = await adminOfNewOrg(env, `Log ${randomUUID().slice(0, 8)}`);
    const res = await client.get(`/orgs/${orgId}`);
    expect(res.status).toBe(200);
    expect(linesOf(res)).toEqual([expect.objectContaining({ level: 'info', method: 'GET', path: `/orgs/${orgId}`, status: 200, userId: adminId, organizationId: orgId })]);
    const all = raw.join('\n');
    for (const value of client.jar.values()) expect(all).not.toContain(value);
  });

  it('when /healthz and /livez answer 200 then they carry an X-Request-Id and are not logged at info', async () => {
    for (const path of ['/healthz', '/livez']) {
      const res = await fetch(`${env.dashboard.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-request-id')).toMatch(/^req_/);
      expect(linesOf(res)).toEqual([]);
    }
    // A session that is not signed in is not one: a fresh client's page view names no user.
    const res = await httpSession(env.dashboard.url).get('/sign-in');
    expect(linesOf(res)).toEqual([expect.objectContaining({ path: '/sign-in', status: 200 })]);
  });
});
