import { existsSync } from 'node:fs';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey, hashApiKey } from '../core/auth/index.js';
import { createOrganization, ensureDefaultPlans } from '../core/billing/index.js';
import type { Db } from '../core/db/index.js';
import type { RunningServer } from './api-fixtures.js';
import { chromiumArgs, chromiumPath, createMember, createOperator, signInInBrowser, startTestDashboard, uniqueEmail } from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// A new key or invitation link (an admin's, or an operator's) in Debian's headless Chromium: shown
// once on the page the form redirects to; a reload, or Back and Forward, shows the list without it
// and makes nothing more.

const haveBrowser = existsSync(chromiumPath);
const apiBaseUrl = 'https://api.example.test';

let db: Db;
let dashboard: RunningServer;
let browser: Browser;

/** A new organization, and a browser context signed in as its admin, on `page`, closed however `use` ends. */
async function asNewAdmin(name: string, page: string, use: (p: Page, orgId: string, context: BrowserContext) => Promise<void>, options: { lang?: 'it' } = {}): Promise<void> {
  const { id: orgId } = await createOrganization(db, { name, planId: 'standard' });
  const admin = await createMember(db, orgId, 'admin');
  const context = await browser.newContext();
  try {
    const p = await context.newPage();
    await signInInBrowser(p, dashboard.url, admin.email, admin.password);
    if (options.lang) await context.addCookies([{ name: 'dash_lang', value: options.lang, url: dashboard.url }]);
    await p.goto(`${dashboard.url}${page.replace(':org', orgId)}`);
    await use(p, orgId, context);
  } finally {
    await context.close();
  }
}

const count = async (table: string, where: Record<string, unknown>) => Number((await db(table).where(where).count<{ n: string }[]>({ n: '*' }))[0]!.n);

/** Reload, then Back and Forward: each a GET of the page, none of them a second POST. */
async function revisit(page: Page, check: () => Promise<void>): Promise<void> {
  await page.reload();
  await check();
  await page.goBack();
  await page.goForward();
  await check();
}

describe.skipIf(!haveBrowser)('a secret shown once in a browser', () => {
  beforeAll(async () => {
    db = testDb();
    await ensureDefaultPlans(db);
    dashboard = await startTestDashboard(db, { apiBaseUrl });
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await db?.destroy();
  });

  it('when an admin creates a key, then the keys page shows it once, and a reload creates no second key and no longer shows it', async () => {
    await asNewAdmin('Browser key once test', '/orgs/:org/keys', async (page, orgId) => {
      await page.getByLabel('Name').fill('ERP sync');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.waitForLoadState('domcontentloaded');
      // The address is the keys page itself: nothing of the key in it.
      expect(page.url()).toBe(`${dashboard.url}/orgs/${orgId}/keys`);
      const key = (await page.locator('#new-key').textContent())!.trim();
      expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
      const panel = (await page.locator('section[aria-labelledby="new-key-title"]').textContent())!;
      expect(panel).toContain('Copy it now: this is the only time it is shown.');
      expect(panel).toContain(`curl -H "Authorization: Bearer ${key}" "${apiBaseUrl}/openapi.json"`);
      expect(await count('api_keys', { organization_id: orgId })).toBe(1);

      await revisit(page, async () => {
        expect(await count('api_keys', { organization_id: orgId })).toBe(1);
        expect(await count('audit_log', { organization_id: orgId, action: 'key.created' })).toBe(1);
        expect(await page.locator('#new-key').count()).toBe(0);
        expect(await page.content()).not.toContain(key);
        // The list still names the key, by its prefix.
        expect(await page.locator('#keys-list').textContent()).toContain(`${key.slice(0, 12)}…`);
      });
    });
  });

  it('when an admin double-clicks "Create key" while the first answer is on its way, then one key is made and the page shows it', async () => {
    await asNewAdmin('Browser key double-click test', '/orgs/:org/keys', async (page, orgId) => {
      // A slow network: the server gets each POST at once, but its answer to the first reaches the
      // browser only after the second click has sent the form again.
      let posts = 0;
      let secondSent!: () => void;
      const second = new Promise<void>((resolve) => { secondSent = resolve; });
      await page.route(`${dashboard.url}/orgs/${orgId}/keys`, async (route) => {
        if (route.request().method() !== 'POST') return route.continue();
        posts += 1;
        if (posts > 1) secondSent();
        const answer = await route.fetch({ maxRedirects: 0 });
        if (posts === 1) await Promise.race([second, new Promise((r) => setTimeout(r, 2_000))]);
        // The browser may have given up on the first navigation for the second: nothing to answer.
        await route.fulfill({ response: answer }).catch(() => undefined);
      });
      await page.getByLabel('Name').fill('ERP sync');
      await page.getByRole('button', { name: 'Create key' }).dblclick({ delay: 50 });
      await page.waitForURL(`${dashboard.url}/orgs/${orgId}/keys`);
      await page.locator('#new-key').waitFor();
      expect(posts).toBe(2);
      expect(await count('api_keys', { organization_id: orgId })).toBe(1);
      expect(await count('audit_log', { organization_id: orgId, action: 'key.created' })).toBe(1);
      // The page the browser landed on shows that one key, not a list without it.
      const key = (await page.locator('#new-key').textContent())!.trim();
      expect(hashApiKey(key)).toBe((await db('api_keys').where({ organization_id: orgId }).first('hash')).hash);
    });
  });

  it('when an admin creates a key on an Italian page, then the key is shown once in Italian', async () => {
    await asNewAdmin('Browser key once Italian test', '/orgs/:org/keys', async (page, orgId) => {
      await page.getByLabel('Nome').fill('ERP');
      await page.getByRole('button', { name: 'Crea chiave' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.locator('#new-key-title').textContent()).toBe('La tua nuova chiave');
      expect(await page.locator('section[aria-labelledby="new-key-title"]').textContent()).toContain("Copiala ora: è l'unica volta che viene mostrata.");
      await page.reload();
      expect(await page.locator('#new-key').count()).toBe(0);
      expect(await count('api_keys', { organization_id: orgId })).toBe(1);
    }, { lang: 'it' });
  });

  it('when an admin rotates a key, then the new key and the rotation notice are shown once, and a reload rotates nothing and shows no refusal', async () => {
    await asNewAdmin('Browser rotation once test', '/orgs/:org/keys', async (page, orgId) => {
      const old = await createApiKey(db, { organizationId: orgId, name: 'billing sync' });
      await page.reload();
      await page.locator('summary', { hasText: 'Rotate' }).click();
      await page.getByLabel('Old key keeps working for').selectOption('3600');
      await page.locator('form[action$="/rotate"]').getByRole('button', { name: 'Rotate' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${dashboard.url}/orgs/${orgId}/keys`);
      const key = (await page.locator('#new-key').textContent())!.trim();
      expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
      expect(await page.locator('.notice-good').textContent()).toContain(`The old key ${old.record.prefix}… stops working at `);

      await revisit(page, async () => {
        expect(await count('api_keys', { rotated_from: old.record.id })).toBe(1);
        expect(await count('audit_log', { organization_id: orgId, action: 'key.rotated' })).toBe(1);
        expect(await page.locator('#new-key').count()).toBe(0);
        expect(await page.locator('.notice').count()).toBe(0);
        expect(await page.content()).not.toContain(key);
      });
    });
  });

  it('when an admin creates an invitation, then its link is shown once, and a reload makes no second invitation and no longer shows it', async () => {
    await asNewAdmin('Browser invitation once test', '/orgs/:org/members', async (page, orgId) => {
      const email = uniqueEmail('invited');
      await page.getByLabel('E-mail').fill(email);
      // Finance unless the admin picks admin: the least a newcomer needs.
      expect(await page.locator('#invite-role').inputValue()).toBe('finance');
      await page.getByRole('button', { name: 'Create invitation' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${dashboard.url}/orgs/${orgId}/members`);
      const link = (await page.locator('#invite-link').textContent())!.trim();
      expect(link).toMatch(new RegExp(`^${dashboard.url}/invitations/[A-Za-z0-9_-]{43}$`));
      expect(await page.locator('section[aria-labelledby="invite-link-title"]').textContent()).toContain(`Send this link to ${email}.`);

      await revisit(page, async () => {
        expect(await count('invitations', { organization_id: orgId, role: 'finance' })).toBe(1);
        expect(await count('audit_log', { organization_id: orgId, action: 'member.invited' })).toBe(1);
        expect(await page.locator('#invite-link').count()).toBe(0);
        expect(await page.content()).not.toContain(link);
        expect(await page.locator('#open-invitations').textContent()).toContain(email);
      });
    });
  });

  it("when an operator invites an admin on an Italian page, then the organization's page shows the link once in Italian, and a reload makes no second invitation and no longer shows it", async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser operator invitation once test', planId: 'standard' });
    const operator = await createOperator(db);
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await signInInBrowser(page, dashboard.url, operator.email, operator.password);
      await context.addCookies([{ name: 'dash_lang', value: 'it', url: dashboard.url }]);
      await page.goto(`${dashboard.url}/operator/organizations/${orgId}`);
      const email = uniqueEmail('invited-admin');
      await page.getByLabel('E-mail').fill(email);
      await page.getByRole('button', { name: 'Crea invito' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${dashboard.url}/operator/organizations/${orgId}`);
      const link = (await page.locator('#invite-link').textContent())!.trim();
      expect(link).toMatch(new RegExp(`^${dashboard.url}/invitations/[A-Za-z0-9_-]{43}$`));
      expect(await page.locator('#invite-link-title').textContent()).toBe('Invita una persona');
      expect(await page.locator('section[aria-labelledby="invite-link-title"]').textContent()).toContain(`Invia questo link a ${email}.`);
      expect(await page.locator('#org-audit').textContent()).toContain(`Invitato ${email} come amministratore`);

      await revisit(page, async () => {
        expect(await count('invitations', { organization_id: orgId })).toBe(1);
        expect(await count('audit_log', { organization_id: orgId, action: 'member.invited' })).toBe(1);
        expect(await page.locator('#invite-link').count()).toBe(0);
        expect(await page.content()).not.toContain(link);
        expect(await page.locator('#invite-link-title').count()).toBe(0);
      });
    } finally {
      await context.close();
    }
  });
});
