import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { browserForFile, chromiumPath, createMember, dashboardForFile, signInInBrowser } from './dashboard-fixtures.js';

// A member who forgot their password, in Debian's headless Chromium: the sign-in page tells them
// whom to ask; their admin presses "Reset password" in their row (and confirms), copies the link
// shown once; the member opens it in their own browser, types a new password twice, and is in.

const haveBrowser = existsSync(chromiumPath);

describe.skipIf(!haveBrowser)('a password reset link in Chromium', () => {
  const env = dashboardForFile();
  const chrome = browserForFile();

  it('when an admin makes one for a member and the member opens it, then the member chooses a new password and is signed in with it', async () => {
    const { id: orgId } = await createOrganization(env.db, { name: 'Browser reset test', planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const member = await createMember(env.db, orgId, 'finance');
    const newPassword = 'a browser-typed new password';
    const adminContext = await chrome.browser.newContext();
    const memberContext = await chrome.browser.newContext();
    try {
      const forgetful = await memberContext.newPage();
      await forgetful.goto(`${env.dashboard.url}/sign-in`);
      expect(await forgetful.locator('#forgot-password').textContent()).toMatch(/^Forgot your password\? .*ask an admin of your organization for a password reset link/);

      const page = await adminContext.newPage();
      await signInInBrowser(page, env.dashboard.url, admin.email, admin.password);
      await page.goto(`${env.dashboard.url}/orgs/${orgId}/members`);
      // Their own row has no such button; the member's asks first.
      const row = page.getByRole('row').filter({ hasText: member.email });
      expect(await page.getByRole('row').filter({ hasText: admin.email }).getByRole('button', { name: 'Reset password' }).count()).toBe(0);
      const asked = new Promise<string>((resolve) => page.once('dialog', (d) => { resolve(d.message()); void d.accept(); }));
      await row.getByRole('button', { name: 'Reset password' }).click();
      expect(await asked).toMatch(new RegExp(`^Make a password reset link for ${member.email.replace(/[.+]/g, '\\$&')}\\?`));
      await page.waitForURL(`**/orgs/${orgId}/members`);
      const link = (await page.locator('#reset-link').textContent())!.trim();
      expect(link).toMatch(new RegExp(`^${env.dashboard.url}/password-reset/[A-Za-z0-9_-]{43}$`));
      // Shown once: a reload has it no more.
      await page.reload();
      expect(await page.locator('#reset-link').count()).toBe(0);

      await forgetful.goto(link);
      expect(await forgetful.getByLabel('E-mail').inputValue()).toBe(member.email);
      await forgetful.getByLabel('New password', { exact: true }).fill(newPassword);
      await forgetful.getByLabel('New password, again').fill(`${newPassword}?`);
      await forgetful.getByRole('button', { name: 'Set the new password' }).click();
      await forgetful.waitForLoadState('domcontentloaded');
      expect(await forgetful.locator('#confirm-password-error').textContent()).toBe('does not match the new password');

      await forgetful.getByLabel('New password', { exact: true }).fill(newPassword);
      await forgetful.getByLabel('New password, again').fill(newPassword);
      await forgetful.getByRole('button', { name: 'Set the new password' }).click();
      await forgetful.waitForURL('**/account/password?done=reset');
      expect(await forgetful.getByRole('status').first().textContent()).toContain('Your new password is set, and you are signed in with it.');
      await forgetful.goto(`${env.dashboard.url}/orgs/${orgId}`);
      expect(await forgetful.getByRole('heading', { level: 1 }).textContent()).toBe('Overview');
    } finally {
      await adminContext.close();
      await memberContext.close();
    }
  });
});
