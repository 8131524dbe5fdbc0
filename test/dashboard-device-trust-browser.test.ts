import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { browserForFile, chromiumPath, createMember, dashboardForFile, httpSession, signInInBrowser } from './dashboard-fixtures.js';

// The device cookie in Debian's headless Chromium, as a person meets it: the browser keeps it
// through "Sign out" and sends it with the sign-in form (SameSite=Strict is enough for our own
// form), so the browser they used before signs them in while someone else keeps their e-mail
// locked; a browser they never used is told to use one they did.

const haveBrowser = existsSync(chromiumPath);

describe.skipIf(!haveBrowser)('a trusted browser in Chromium', () => {
  const env = dashboardForFile();
  const chrome = browserForFile();

  it('when someone keeps an admin\'s e-mail locked then the browser the admin signed in with before still signs in, and a new one is told to use it', async () => {
    const { id: orgId } = await createOrganization(env.db, { name: 'Browser device trust test', planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const usual = await chrome.browser.newContext();
    const other = await chrome.browser.newContext();
    try {
      const page = await usual.newPage();
      await signInInBrowser(page, env.dashboard.url, admin.email, admin.password);
      expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}`);
      const device = (await usual.cookies()).find((c) => c.name === 'dash_device');
      expect(device).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/sign-in$/);

      const attacker = httpSession(env.dashboard.url);
      for (let i = 0; i < 6; i++) await attacker.signIn(admin.email, `guess ${i}`);
      expect((await attacker.signIn(admin.email, admin.password)).status).toBe(429);

      await signInInBrowser(page, env.dashboard.url, admin.email, admin.password);
      expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}`);

      const stranger = await other.newPage();
      await signInInBrowser(stranger, env.dashboard.url, admin.email, admin.password);
      expect(new URL(stranger.url()).pathname).toBe('/sign-in');
      await expect.poll(() => stranger.getByRole('alert').textContent()).toContain('A browser you have signed in with before is not locked');
    } finally {
      await usual.close();
      await other.close();
    }
  });
});
