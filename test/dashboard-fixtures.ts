// Shared set-up of the dashboard tests: the real dashboard app on a random port, people with
// known passwords, usage applied through the billing pipeline for one organization only
// (so files running in parallel never take each other's bus rows).
import { randomUUID } from 'node:crypto';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { createDatabaseProbe, type Db } from '../core/db/index.js';
import { applyUsageBatch, createOrganization, ensureDefaultPlans } from '../core/billing/index.js';
import { addMembership, hashPassword, upsertOperator, type MemberRole } from '../core/dashboard-auth/index.js';
import { newId } from '../core/ids/index.js';
import { createLogger } from '../core/logging/index.js';
import type { UsageEvent } from '../core/usage/index.js';
import { createDashboardApp, type DashboardDeps } from '../dashboard/app.js';
import { listen, type RunningServer } from './api-fixtures.js';
import { testDb } from './support/database.js';

export const chromiumPath = '/usr/bin/chromium';
export const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** Signs a browser page in through the dashboard's own sign-in form, as a person would. */
export async function signInInBrowser(page: Page, dashboardUrl: string, email: string, password: string): Promise<void> {
  await page.goto(`${dashboardUrl}/sign-in`);
  await page.getByLabel(/E-mail/).fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForLoadState('domcontentloaded');
}

export async function startTestDashboard(db: Db, options: Partial<DashboardDeps> = {}): Promise<RunningServer> {
  // Test receivers listen on 127.0.0.1: private webhook targets allowed, as outside production.
  const app = createDashboardApp({ db, checkDatabase: createDatabaseProbe(db), logger: createLogger({ level: 'silent' }), secureCookies: false, allowPrivateWebhookTargets: true, ...options });
  return listen(app);
}

/**
 * A database connection and a dashboard for one test file: opened before its tests (default plans
 * ensured) and closed after. Read `db` and `dashboard` inside tests, not at load time.
 */
export function dashboardForFile(options: Partial<DashboardDeps> = {}): { db: Db; dashboard: RunningServer } {
  const env = {} as { db: Db; dashboard: RunningServer };
  beforeAll(async () => {
    env.db = testDb();
    await ensureDefaultPlans(env.db);
    env.dashboard = await startTestDashboard(env.db, options);
  });
  afterAll(async () => {
    await env.dashboard?.close();
    await env.db?.destroy();
  });
  return env;
}

/** Debian's headless Chromium for one test file (or describe block): launched before its tests, closed after. */
export function browserForFile(): { browser: Browser } {
  const env = {} as { browser: Browser };
  beforeAll(async () => {
    env.browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });
  afterAll(async () => {
    await env.browser?.close();
  });
  return env;
}

export const uniqueEmail = (who: string) => `${who}-${randomUUID().slice(0, 8)}@example.test`;

export async function createOperator(db: Db): Promise<{ email: string; password: string }> {
  const email = uniqueEmail('operator');
  const password = `pw-${randomUUID()}`;
  await upsertOperator(db, { email, password });
  return { email, password };
}

/** A new organization on the standard plan, and a signed-in session of its admin. */
export async function adminOfNewOrg(env: { db: Db; dashboard: RunningServer }, name: string) {
  const org = await createOrganization(env.db, { name, planId: 'standard' });
  const admin = await createMember(env.db, org.id, 'admin');
  const client = httpSession(env.dashboard.url);
  await client.signIn(admin.email, admin.password);
  return { orgId: org.id, adminId: admin.userId, client };
}

/** A new operator, signed in. */
export async function signedInOperator(env: { db: Db; dashboard: RunningServer }) {
  const operator = await createOperator(env.db);
  const client = httpSession(env.dashboard.url);
  await client.signIn(operator.email, operator.password);
  return client;
}

export async function createMember(db: Db, organizationId: string, role: MemberRole): Promise<{ userId: string; email: string; password: string }> {
  const email = uniqueEmail(role);
  const password = `pw-${randomUUID()}`;
  const userId = newId('usr');
  await db('users').insert({ id: userId, email, password_hash: await hashPassword(password) });
  await addMembership(db, { userId, organizationId, role });
  return { userId, email, password };
}

// Applies one organization's events waiting on the Postgres bus, as the billing worker would.
export { applyBusEventsOf } from './support/usage-bus.js';

export async function applyUsage(db: Db, events: UsageEvent[]): Promise<void> {
  await db.transaction((trx) => applyUsageBatch(trx, events.map((e, i) => ({ value: e, ref: `test#${i}` })), { bus: 'postgres' }));
}

// The same usage event factory as the billing tests.
export { usageEvent as usageEventFor } from './billing-fixtures.js';

const unescapeHtml = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);

/**
 * The hidden fields of the page's form that posts to `action`, by name; of several (the
 * operator's product forms, one a product), the one whose hidden fields include `having`.
 */
export function hiddenFieldsOf(body: string, action: string, having: Record<string, string> = {}): Record<string, string> {
  const forms = [...body.matchAll(/<form\b[^>]*\baction="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)]
    .filter((m) => unescapeHtml(m[1]!) === action)
    .map((m) => Object.fromEntries([...m[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map((f) => [f[1]!, unescapeHtml(f[2]!)])));
  const form = forms.find((fields) => Object.entries(having).every(([name, value]) => fields[name] === value));
  if (!form) throw new Error(`no form posting to ${action}${Object.keys(having).length > 0 ? ` with ${JSON.stringify(having)}` : ''}`);
  return form;
}

/** A cookie-keeping client for the no-browser tests: follows no redirects, keeps Set-Cookie. */
export function httpSession(baseUrl: string) {
  const jar = new Map<string, string>();
  const remember = (res: Response) => {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(c) || value === '') jar.delete(name);
      else jar.set(name, value);
    }
  };
  const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const client = {
    jar,
    async get(path: string): Promise<Response> {
      const res = await fetch(baseUrl + path, { headers: { cookie: cookie() }, redirect: 'manual' });
      remember(res);
      return res;
    },
    async post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Response> {
      const res = await fetch(baseUrl + path, {
        method: 'POST',
        headers: { ...headers, cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
        redirect: 'manual',
      });
      remember(res);
      return res;
    },
    /** The CSRF token of the page's forms. */
    async csrf(path: string): Promise<string> {
      const body = await (await client.get(path)).text();
      const m = /name="_csrf" value="([^"]+)"/.exec(body);
      if (!m) throw new Error(`no CSRF token on ${path}`);
      return m[1]!;
    },
    /**
     * The hidden fields (the CSRF token among them) of the form on `path` that posts to `action`,
     * as a browser sends them with it: a test then adds the fields a person types.
     */
    async hiddenFields(path: string, action: string, having: Record<string, string> = {}): Promise<Record<string, string>> {
      return hiddenFieldsOf(await (await client.get(path)).text(), action, having);
    },
    async signIn(email: string, password: string): Promise<Response> {
      const token = await client.csrf('/sign-in');
      return client.post('/sign-in', { _csrf: token, email, password, next: '/' });
    },
  };
  return client;
}

/**
 * Makes the database refuse every audit row of one organization (a trigger raising an error),
 * as a failure between an action's writes would; the returned function removes the trigger.
 * Other organizations' rows, and so the test files running alongside, are not affected.
 */
export async function refuseAuditRowsOf(db: Db, organizationId: string): Promise<() => Promise<void>> {
  if (!/^\w+$/.test(organizationId)) throw new Error(`unexpected organization id ${organizationId}`);
  const name = `test_refuse_audit_${randomUUID().replaceAll('-', '')}`;
  await db.raw(`CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.organization_id = '${organizationId}' THEN RAISE EXCEPTION 'audit row refused by the test'; END IF;
      RETURN NEW;
    END $$`);
  await db.raw(`CREATE TRIGGER ${name} BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION ${name}()`);
  return async () => {
    await db.raw(`DROP TRIGGER ${name} ON audit_log`);
    await db.raw(`DROP FUNCTION ${name}()`);
  };
}
