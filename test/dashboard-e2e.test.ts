import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { deliverDueWebhooks, evaluateThresholds, verifyWebhookSignature } from '../core/alerts/index.js';
import { allowanceReportCsv, buildAllowanceReport, ensureDefaultPlans } from '../core/billing/index.js';
import type { Db } from '../core/db/index.js';
import { ensureExampleCompany, exampleCompanyCode, startTestApi, type RunningServer, type TestApi } from './api-fixtures.js';
import {
  applyBusEventsOf, applyUsage, chromiumArgs, chromiumPath, createMember, createOperator, signInInBrowser, startTestDashboard, uniqueEmail, usageEventFor,
} from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// The dashboard end to end in Debian's headless Chromium: an operator provisions an
// organization and invites its admin; the admin's key works at the real API and stops working
// within a second of being revoked; finance downloads the same CSV as `cli report`; an admin
// of another organization gets nothing by editing URLs; a threshold sends one signed webhook.

const run = promisify(execFile);
const repoRoot = fileURLToPath(new URL('..', import.meta.url));
// The pages are photographed on every run (a page that fails to render fails the test), but
// into a temporary folder: a test run must not rewrite tracked files. `UPDATE_SCREENSHOTS=1`
// saves them where the docs show them (see docs/dashboard.md).
const updateDocs = process.env.UPDATE_SCREENSHOTS === '1';
let screenshots = fileURLToPath(new URL('../docs/screenshots/', import.meta.url));
let temporaryScreenshots: string | undefined;
const haveBrowser = existsSync(chromiumPath);

let db: Db;
let api: TestApi;
let dashboard: RunningServer;
let browser: Browser;
let operator: { email: string; password: string };

// Shared along the story, in the order the steps run.
let orgId = '';
let orgName = '';
let adminContext: BrowserContext;
let admin: Page;
let revokedKeyPrefix = '';

const signIn = (page: Page, email: string, password: string) => signInInBrowser(page, dashboard.url, email, password);

async function callApi(key: string): Promise<number> {
  const res = await fetch(`${api.url}/companies/${exampleCompanyCode}/financials`, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return res.status;
}

describe.skipIf(!haveBrowser)('the dashboard in a browser', () => {
  beforeAll(async () => {
    db = testDb();
    await ensureDefaultPlans(db);
    // A long key-cache TTL: the API must learn of the revocation by notification, not expiry.
    api = await startTestApi({ keyCacheTtlMs: 60_000 });
    await ensureExampleCompany(api.db);
    dashboard = await startTestDashboard(db, { apiBaseUrl: api.url });
    operator = await createOperator(db);
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
    if (updateDocs) await mkdir(screenshots, { recursive: true });
    else screenshots = temporaryScreenshots = `${await mkdtemp(path.join(tmpdir(), 'dashboard-screenshots-'))}/`;
  });

  afterAll(async () => {
    if (temporaryScreenshots) await rm(temporaryScreenshots, { recursive: true, force: true });
    await browser?.close();
    await dashboard?.close();
    await api?.close();
    await db?.destroy();
  });

  it('when an operator provisions an organization and invites an admin, then the invitation link lets the admin in', async () => {
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 } });
    const page = await context.newPage();
    await signIn(page, operator.email, operator.password);
    expect(new URL(page.url()).pathname).toBe('/operator');

    orgName = `Acme Analytics ${Date.now().toString(36)}`;
    await page.getByLabel('Name', { exact: true }).fill(orgName);
    await page.getByLabel('Plan', { exact: true }).selectOption('standard');
    await page.getByRole('button', { name: 'Create organization' }).click();
    await page.waitForURL(/\/operator\/organizations\/org_/);
    orgId = /\/operator\/organizations\/(org_[A-Za-z0-9]+)/.exec(page.url())![1]!;
    const plan = await db('organizations').where({ id: orgId }).first('plan_id', 'name');
    expect(plan).toEqual({ plan_id: 'standard', name: orgName });

    await page.getByLabel('E-mail').fill(uniqueEmail('admin'));
    await page.getByRole('button', { name: 'Create invitation' }).click();
    const link = (await page.locator('#invite-link').textContent())!.trim();
    expect(link).toMatch(new RegExp(`^${dashboard.url}/invitations/[A-Za-z0-9_-]{43}$`));
    await page.screenshot({ path: `${screenshots}operator-organization.png`, fullPage: true });

    // The overview lists organizations 50 a page (other test files make many): found by name.
    await page.goto(`${dashboard.url}/operator`);
    await page.fill('#org-search', orgName);
    await page.click('#all-orgs button[type=submit]');
    await page.waitForURL(/\/operator\?q=/);
    expect(await page.locator('#all-orgs').textContent()).toContain(orgName);
    await page.screenshot({ path: `${screenshots}operator-overview.png`, fullPage: true });
    await context.close();

    adminContext = await browser.newContext({ viewport: { width: 1360, height: 900 }, permissions: ['clipboard-read', 'clipboard-write'] });
    admin = await adminContext.newPage();
    await admin.goto(link);
    await admin.getByLabel('Your name').fill('Ada Admin');
    await admin.getByLabel('New password', { exact: true }).fill('a long enough password');
    await admin.getByLabel('New password, again').fill('a long enough password');
    await admin.getByRole('button', { name: 'Accept invitation' }).click();
    await admin.waitForURL(`${dashboard.url}/orgs/${orgId}`);
    expect(await admin.locator('h1').textContent()).toBe('Overview');

    // The link works once: opened again (a moment later, without the admin's session) it says
    // it was accepted and offers sign-in, with no form to accept it a second time.
    const again = await fetch(link);
    const body = await again.text();
    expect(again.status).toBe(200);
    expect(body).toContain('has been accepted. Sign in to continue.');
    expect(body).not.toContain('Accept invitation');
  });

  it('when the admin creates a key, then the API answers 200 with it, and after revoking it the API refuses it within 1 s', async () => {
    await admin.goto(`${dashboard.url}/orgs/${orgId}/keys`);
    await admin.getByLabel('Name').fill('ERP production');
    await admin.getByRole('button', { name: 'Create key' }).click();
    const key = (await admin.locator('#new-key').textContent())!.trim();
    expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
    await admin.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await admin.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    await admin.screenshot({ path: `${screenshots}keys.png`, fullPage: true });

    expect(await callApi(key)).toBe(200);
    // The key list never shows the key again, only its prefix.
    await admin.goto(`${dashboard.url}/orgs/${orgId}/keys`);
    expect(await admin.content()).not.toContain(key);
    revokedKeyPrefix = key.slice(0, 12);

    admin.once('dialog', (d) => void d.accept());
    await admin.getByRole('button', { name: 'Revoke' }).click();
    await admin.waitForURL(/done=revoked/);
    const revokedAt = Date.now();
    let status = await callApi(key);
    while (status !== 401 && Date.now() - revokedAt < 3_000) {
      await new Promise((r) => setTimeout(r, 25));
      status = await callApi(key);
    }
    const tookMs = Date.now() - revokedAt;
    expect(status).toBe(401);
    expect(tookMs).toBeLessThan(1_000);
    // Revoked, the key leaves the default list (active keys) and is listed under Revoked.
    expect(await admin.locator('#keys-list').textContent()).not.toContain(revokedKeyPrefix);
    await admin.goto(`${dashboard.url}/orgs/${orgId}/keys?state=revoked`);
    expect(await admin.locator('#keys-list').textContent()).toContain(revokedKeyPrefix);

    // Who did what: the activity page, reached from the side bar, newest first.
    await admin.getByRole('link', { name: 'Activity' }).click();
    const activity = (await admin.locator('#activity-table').textContent())!;
    expect(activity).toMatch(/Revoked API key ERP production \(sk_live_\w+…\)[\s\S]*Created API key ERP production \(sk_live_\w+…\)/);
    await admin.screenshot({ path: `${screenshots}activity.png`, fullPage: true });
  });

  it('when finance opens the usage chart and downloads the CSV, then it is a UTF-8 BOM and the bytes of `cli report --format csv`', async () => {
    // The call above, through the billing pipeline, plus a few more days and products.
    await expect.poll(() => applyBusEventsOf(db, orgId).then(async () => Number((await db('usage_ledger').where({ organization_id: orgId, entry_type: 'usage' }).count<{ n: string }[]>({ n: '*' }))[0]!.n)), { timeout: 10_000 }).toBe(1);
    const today = new Date();
    const day = (back: number) => new Date(Math.max(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1, 9), today.getTime() - back * 86_400_000)).toISOString();
    await applyUsage(db, [
      ...Array.from({ length: 6 }, (_, i) => usageEventFor(orgId, { occurredAt: day(i % 3), keyId: 'key_reporting', product: 'company-credit-report', quantity: 10 })),
      ...Array.from({ length: 4 }, () => usageEventFor(orgId, { occurredAt: day(1), keyId: 'key_reporting', product: 'company-report', quantity: 1, unit: 'calls' })),
      usageEventFor(orgId, { occurredAt: day(0), source: 'mcp', product: 'service_get_company_profile', quantity: 8 }),
    ]);

    const finance = await createMember(db, orgId, 'finance');
    const context = await browser.newContext({ viewport: { width: 1360, height: 900 }, acceptDownloads: true });
    const page = await context.newPage();
    await signIn(page, finance.email, finance.password);
    expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}`);
    await page.screenshot({ path: `${screenshots}overview.png`, fullPage: true });
    await page.goto(`${dashboard.url}/orgs/${orgId}/usage`);
    expect(await page.locator('#usage-chart svg rect.bar').count()).toBeGreaterThan(0);
    await page.screenshot({ path: `${screenshots}usage.png`, fullPage: true });
    await page.getByRole('link', { name: 'By endpoint / tool' }).click();
    expect(await page.locator('#usage-chart svg').textContent()).toContain('company-credit-report');

    // Finance reads; keys are not theirs to touch.
    const keys = await page.goto(`${dashboard.url}/orgs/${orgId}/keys`);
    expect(keys!.status()).toBe(403);

    const period = today.toISOString().slice(0, 7);
    await page.goto(`${dashboard.url}/orgs/${orgId}/report?period=${period}`);
    // Keys by the name the admin gave them, as the key list shows them; one with no key row by its id.
    const keysSection = (await page.locator('#report-keys').textContent())!;
    expect(keysSection).toContain(`ERP production (${revokedKeyPrefix}…)`);
    expect(keysSection).toMatch(/\(deleted key\)\s*key_reporting/);
    await page.screenshot({ path: `${screenshots}report.png`, fullPage: true });
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download CSV' }).click()]);
    const file = await readFile((await download.path())!);
    // Excel reads the file as UTF-8 only with a BOM (EF BB BF); the rest is the CLI's bytes.
    expect([...file.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const csv = file.subarray(3).toString('utf8');
    await context.close();

    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'report', '--org', orgId, '--period', period, '--format', 'csv'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: inject('databaseUrl'), MIGRATE_ON_START: 'false', LOG_LEVEL: '' },
    });
    // generated_at says when each file was made; every other byte must match.
    const stamp = (s: string) => s.replace(/^summary,generated_at,,[^,]*,/m, 'summary,generated_at,,(stamp),');
    expect(stamp(csv)).toBe(stamp(stdout));
    expect(csv).toContain('by_product,api:company-credit-report,,60,credits,6,,\r\n');
    expect(csv).toContain('\r\nby_key,key_reporting,,4,calls,4,,\r\n');
    expect(csv).toMatch(new RegExp(`\r\nby_key,key_\\w+,,5,credits,1,ERP production \\(${revokedKeyPrefix}…\\),\r\n`));
    // And byte for byte against the shared formatter at a fixed clock, each line CR LF ended.
    const at = new Date('2030-01-01T00:00:00Z');
    expect(allowanceReportCsv(await buildAllowanceReport(db, orgId, period, at)).map((l) => `${l}\r\n`).join('')).toBe(csv.replace(/^(summary,generated_at,,)[^,]*,/m, `$1${at.toISOString()},`));
  });

  it('when an admin of organization B edits URLs to reach organization A, then every page and action answers 404 and shows nothing of A', async () => {
    const other = await db.transaction(async (trx) => {
      const { createOrganization } = await import('../core/billing/index.js');
      return createOrganization(trx, { name: `Other Co ${Date.now().toString(36)}`, planId: 'standard' });
    });
    const adminB = await createMember(db, other.id, 'admin');
    const keyA = await db('api_keys').where({ organization_id: orgId }).first('id');
    const context = await browser.newContext();
    const page = await context.newPage();
    await signIn(page, adminB.email, adminB.password);
    expect(new URL(page.url()).pathname).toBe(`/orgs/${other.id}`);

    for (const path of ['', '/keys', '/usage', '/report', `/report.csv?period=${new Date().toISOString().slice(0, 7)}`, '/ledger', '/members', '/alerts', '/activity']) {
      const res = await page.request.get(`${dashboard.url}/orgs/${orgId}${path}`, { maxRedirects: 0 });
      expect(res.status(), path).toBe(404);
      const body = await res.text();
      expect(body, path).not.toContain(orgName);
      expect(body, path).not.toContain(revokedKeyPrefix);
    }
    for (const path of ['/operator', `/operator/organizations/${orgId}`]) {
      expect((await page.request.get(`${dashboard.url}${path}`, { maxRedirects: 0 })).status(), path).toBe(404);
    }
    // Actions too, with B's own valid CSRF token: A's key through A's URL and through B's.
    await page.goto(`${dashboard.url}/orgs/${other.id}/keys`);
    const csrf = await page.locator('input[name=_csrf]').first().inputValue();
    for (const path of [`/orgs/${orgId}/keys/${keyA.id}/rotate`, `/orgs/${other.id}/keys/${keyA.id}/rotate`, `/orgs/${orgId}/keys`, `/orgs/${orgId}/members/invite`, `/orgs/${orgId}/alerts/webhook`]) {
      const res = await page.request.post(`${dashboard.url}${path}`, { form: { _csrf: csrf, name: 'stolen', email: 'x@example.test', role: 'admin', webhookUrl: 'http://127.0.0.1:1/' }, maxRedirects: 0 });
      expect(res.status(), path).toBe(404);
    }
    expect(Number((await db('api_keys').where({ organization_id: orgId }).count<{ n: string }[]>({ n: '*' }))[0]!.n)).toBe(1);
    expect(await db('invitations').where({ organization_id: orgId, email: 'x@example.test' }).first()).toBeUndefined();
    await context.close();
  });

  it('when the balance crosses a threshold, then exactly one signed webhook reaches the receiver and the delivery shows in the log', async () => {
    const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
    try {
      await admin.goto(`${dashboard.url}/orgs/${orgId}/alerts`);
      await admin.getByLabel('Webhook URL').fill(receiverUrl);
      await admin.locator('#alerts-webhook').getByRole('button', { name: 'Save' }).click();
      await admin.waitForURL(/done=saved/);
      const balance = (await db('allowances').where({ organization_id: orgId }).first('credits_balance')).credits_balance as number;
      await admin.getByLabel('When').selectOption('balance_below');
      await admin.getByLabel('Value').fill(String(balance + 1_000));
      await admin.getByRole('button', { name: 'Add threshold' }).click();
      await admin.waitForURL(/done=saved/);

      // What the dashboard process's alert runner does every few seconds, run a few times.
      // (Delivery passes repeat until nothing is due: other files' deliveries share the table.)
      for (let i = 0; i < 3; i++) {
        await evaluateThresholds(db);
        for (let j = 0; j < 20; j++) {
          const sent = await deliverDueWebhooks(db, { allowPrivateTargets: true }); // the receiver is on 127.0.0.1
          if (sent.delivered + sent.retrying + sent.failed === 0) break;
        }
      }
      expect(received).toHaveLength(1);
      const [hook] = received;
      const secret = (await db('alert_settings').where({ organization_id: orgId }).first('webhook_secret')).webhook_secret as string;
      expect(verifyWebhookSignature({ secret, body: hook!.body, signature: hook!.headers['x-signature'] as string, timestamp: hook!.headers['x-webhook-timestamp'] as string })).toBe(true);
      expect(JSON.parse(hook!.body)).toMatchObject({ type: 'allowance.threshold_crossed', organizationId: orgId, threshold: { kind: 'balance_below', value: balance + 1_000 } });

      await admin.goto(`${dashboard.url}/orgs/${orgId}/alerts`);
      expect(await admin.locator('#alerts-deliveries').textContent()).toContain('Delivered');
      expect(await admin.locator('#alerts-deliveries').textContent()).toContain('HTTP 204');
      expect(await admin.getByRole('alert').first().textContent()).toContain('credits balance went below');
      await admin.screenshot({ path: `${screenshots}alerts.png`, fullPage: true });
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
      await adminContext.close();
    }
  });
});
