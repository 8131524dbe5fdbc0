import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, ensureDefaultPlans } from '../core/billing/index.js';
import type { Db } from '../core/db/index.js';
import type { RunningServer } from './api-fixtures.js';
import { chromiumArgs, chromiumPath, createMember, httpSession, signInInBrowser, startTestDashboard } from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// The device cookie in Debian's headless Chromium, as a person meets it: the browser keeps it
// through "Sign out" and sends it with the sign-in form (SameSite=Strict is enough for our own
// form), so the browser they used before signs them in while someone else keeps their e-mail
// locked; a browser they never used is told to use one they did.

const haveBrowser = existsSync(chromiumPath);

let db: Db;
let dashboard: RunningServer;
let browser: Browser;

describe.skipIf(!haveBrowser)('a trusted browser in Chromium', () => {
  beforeAll(async () => {
    db = testDb();
    await ensureDefaultPlans(db);
    dashboard = await startTestDashboard(db);
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await db?.destroy();
  });

  it('when someone keeps an admin\'s e-mail locked then the browser the admin signed in with before still signs in, and a new one is told to use it', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser device trust test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    const usual = await browser.newContext();
    const other = await browser.newContext();
    try {
      const page = await usual.newPage();
      await signInInBrowser(page, dashboard.url, admin.email, admin.password);
      expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}`);
      const device = (await usual.cookies()).find((c) => c.name === 'dash_device');
      expect(device).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      await page.getByRole('button', { name: 'Sign out', exact: true }).click();
      await page.waitForURL(/\/sign-in$/);

      const attacker = httpSession(dashboard.url);
      for (let i = 0; i < 6; i++) await attacker.signIn(admin.email, `guess ${i}`);
      expect((await attacker.signIn(admin.email, admin.password)).status).toBe(429);

      await signInInBrowser(page, dashboard.url, admin.email, admin.password);
      expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}`);

      const stranger = await other.newPage();
      await signInInBrowser(stranger, dashboard.url, admin.email, admin.password);
      expect(new URL(stranger.url()).pathname).toBe('/sign-in');
      await expect.poll(() => stranger.getByRole('alert').textContent()).toContain('A browser you have signed in with before is not locked');
    } finally {
      await usual.close();
      await other.close();
    }
  });
});
