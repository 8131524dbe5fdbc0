import { existsSync } from 'node:fs';
import type { BrowserContext, Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { browserForFile, chromiumPath, createMember, dashboardForFile, signInInBrowser } from './dashboard-fixtures.js';

// The keys page in Debian's headless Chromium, for people who use a screen reader or a keyboard
// and for those reading it in Italian: where focus goes once a key is made, what is announced,
// and what the expiry picker lets one choose.

const haveBrowser = existsSync(chromiumPath);
const apiBaseUrl = 'https://api.example.test';

describe.skipIf(!haveBrowser)('the keys page in a browser', () => {
  const env = dashboardForFile({ apiBaseUrl });
  const chromium = browserForFile();

  /** A new organization, and its admin's browser on its keys page, closed however `use` ends. */
  async function asNewAdmin(name: string, use: (page: Page, orgId: string) => Promise<void>, options: { lang?: 'it' } = {}): Promise<void> {
    const { id: orgId } = await createOrganization(env.db, { name, planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const context: BrowserContext = await chromium.browser.newContext();
    try {
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: env.dashboard.url });
      const page = await context.newPage();
      await signInInBrowser(page, env.dashboard.url, admin.email, admin.password);
      if (options.lang) await context.addCookies([{ name: 'dash_lang', value: options.lang, url: env.dashboard.url }]);
      await page.goto(`${env.dashboard.url}/orgs/${orgId}/keys`);
      await use(page, orgId);
    } finally {
      await context.close();
    }
  }

  // Expressions run in the page (strings: this file is type-checked without the DOM's types).
  const activeId = (page: Page) => page.evaluate<string | null>('document.activeElement ? document.activeElement.id : null');
  const clipboard = (page: Page) => page.evaluate<string>('navigator.clipboard.readText()');
  // `autofocus` is applied at the browser's next rendering step, after the page has loaded, so
  // focus is awaited rather than read once (read once, it raced on a loaded CI machine).
  const expectFocusOnNewKeyPanel = (page: Page) => expect.poll(() => activeId(page), { timeout: 5_000 }).toBe('new-key-panel');

  it('when an admin creates a key, then focus moves to the panel showing it, a live region, and each Copy is announced as "Copied" in a status region', async () => {
    await asNewAdmin('Keys page focus test', async (page) => {
      await page.getByLabel('Name').fill('ERP sync');
      await page.getByRole('button', { name: 'Create key' }).click();
      const key = (await page.locator('#new-key').textContent())!.trim();
      await expectFocusOnNewKeyPanel(page);
      const panel = page.locator('#new-key-panel');
      expect(await panel.getAttribute('aria-live')).toBe('polite');
      expect(await panel.getAttribute('aria-labelledby')).toBe('new-key-title');

      // Nothing announced before anything is copied; then "Copied" in the region beside each button.
      const keyCopied = page.locator('#new-key-copied');
      expect(await keyCopied.getAttribute('role')).toBe('status');
      expect(await keyCopied.textContent()).toBe('');
      await page.locator('[data-copy="new-key"]').click();
      await expect.poll(() => keyCopied.textContent()).toBe('Copied');
      expect(await clipboard(page)).toBe(key);

      await page.getByRole('button', { name: 'Copy command' }).click();
      await expect.poll(() => page.locator('#try-it-copied').textContent()).toBe('Copied');
      expect(await clipboard(page)).toBe(`curl -H "Authorization: Bearer ${key}" "${apiBaseUrl}/openapi.json"`);
    });
  });

  it('when the page is in Italian, then it names the tool server in Italian and announces "Copiato" once the key is copied', async () => {
    await asNewAdmin('Keys page Italian test', async (page) => {
      const intro = (await page.locator('p.lead').textContent())!;
      expect(intro).toContain('le API e il server MCP');
      expect(await page.locator('main').textContent()).not.toContain('tool server');
      await page.getByLabel('Nome').fill('ERP');
      await page.getByRole('button', { name: 'Crea chiave' }).click();
      await page.locator('#new-key').waitFor();
      await expectFocusOnNewKeyPanel(page);
      await page.locator('[data-copy="new-key"]').click();
      await expect.poll(() => page.locator('#new-key-copied').textContent()).toBe('Copiato');
      await page.getByRole('button', { name: 'Copia comando' }).click();
      await expect.poll(() => page.locator('#try-it-copied').textContent()).toBe('Copiato');
    }, { lang: 'it' });
  });

  it('when an admin picks an expiry, then the picker starts at tomorrow (UTC): the browser refuses an earlier date and makes no key', async () => {
    await asNewAdmin('Keys page expiry picker test', async (page, orgId) => {
      const day = (offsetDays: number) => new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
      const expiry = page.getByLabel('Expiry (optional)');
      expect(await expiry.getAttribute('min')).toBe(day(1));
      const posts: string[] = [];
      page.on('request', (request) => { if (request.method() === 'POST') posts.push(request.url()); });
      await page.getByLabel('Name').fill('dated');
      await expiry.fill(day(-1));
      expect(await expiry.evaluate((input) => (input as unknown as { validity: { rangeUnderflow: boolean } }).validity.rangeUnderflow)).toBe(true);
      await page.getByRole('button', { name: 'Create key' }).click();
      // Today is no choice either: valid through today, the key would be expiring from the start.
      await expiry.fill(day(0));
      expect(await expiry.evaluate((input) => (input as unknown as { validity: { rangeUnderflow: boolean } }).validity.rangeUnderflow)).toBe(true);
      await page.getByRole('button', { name: 'Create key' }).click();

      await expiry.fill(day(1));
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.locator('#new-key').waitFor();
      // One form sent, the last: the browser kept the others.
      expect(posts).toEqual([`${env.dashboard.url}/orgs/${orgId}/keys`]);
      const keys = await env.db('api_keys').where({ organization_id: orgId }).select('expires_at');
      expect(keys.map((k: { expires_at: Date }) => k.expires_at.toISOString())).toEqual([`${day(1)}T23:59:59.999Z`]);
    });
  });
});
