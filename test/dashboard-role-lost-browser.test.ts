import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { browserForFile, chromiumPath, createMember, dashboardForFile, httpSession, signInInBrowser } from './dashboard-fixtures.js';

// An admin made finance while their page is open, in Debian's headless Chromium: the side bar
// they still see offers the members page; following it, they are told that their role changed
// and are offered the pages finance opens, one of which they follow.

const haveBrowser = existsSync(chromiumPath);

describe.skipIf(!haveBrowser)('a demoted admin in Chromium', () => {
  const env = dashboardForFile();
  const chrome = browserForFile();

  it('when another admin makes them finance then their next click on an admin page says so and leads to a page finance opens', async () => {
    const { id: orgId } = await createOrganization(env.db, { name: 'Browser demotion test', planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const demoted = await createMember(env.db, orgId, 'admin');
    const context = await chrome.browser.newContext();
    try {
      const page = await context.newPage();
      await signInInBrowser(page, env.dashboard.url, demoted.email, demoted.password);
      await page.getByRole('link', { name: 'API keys' }).click();
      await page.waitForURL(`**/orgs/${orgId}/keys`);

      const other = httpSession(env.dashboard.url);
      await other.signIn(admin.email, admin.password);
      const members = `/orgs/${orgId}/members`;
      expect((await other.post(`${members}/${demoted.userId}/role`, { _csrf: await other.csrf(members), role: 'finance' })).status).toBe(303);

      const answer = page.waitForResponse((r) => r.url().endsWith(members));
      await page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Members' }).click();
      expect((await answer).status()).toBe(403);
      await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Not open to your role');
      expect(await page.getByRole('alert').textContent()).toMatch(/^Your role in Browser demotion test was changed to finance on .+ UTC: this page or action is for its admins\.$/);
      // The side bar is finance's now: no members page in it.
      await expect.poll(() => page.getByRole('navigation', { name: 'Main navigation' }).getByRole('link', { name: 'Members' }).count()).toBe(0);

      await page.getByRole('main').getByRole('link', { name: 'Usage' }).click();
      await page.waitForURL(`**/orgs/${orgId}/usage`);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).not.toBe('Not open to your role');
    } finally {
      await context.close();
    }
  });
});
