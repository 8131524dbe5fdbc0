import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization, ensureDefaultPlans, setCallsCap } from '../core/billing/index.js';
import { addThreshold, alertSettings } from '../core/alerts/index.js';
import { createInvitation } from '../core/dashboard-auth/index.js';
import type { Db } from '../core/db/index.js';
import type { RunningServer } from './api-fixtures.js';
import { chromiumArgs, chromiumPath, createMember, createOperator, signInInBrowser, startTestDashboard } from './dashboard-fixtures.js';
import { testDb } from './support/database.js';

// Refused forms in Debian's headless Chromium, as people meet them: what they typed is still in
// the fields, and why each field was refused is written under it. Values the browser itself lets
// through (its own checks stop some), refused by the server.

const haveBrowser = existsSync(chromiumPath);

let db: Db;
let dashboard: RunningServer;
let browser: Browser;

/**
 * A fresh browser context signed in as `who`, on `path`, closed however `use` ends. In Italian
 * (`lang: 'it'`), the browser's own locale is Italy's too, as an Italian's Chromium is (its
 * number fields read a comma by it); it signs in in English, then reads the pages in Italian.
 */
async function onPageAs(who: { email: string; password: string }, path: string, use: (page: Page) => Promise<void>, options: { lang?: 'it' } = {}): Promise<void> {
  const context = await browser.newContext(options.lang === 'it' ? { locale: 'it-IT' } : {});
  try {
    const page = await context.newPage();
    if (options.lang) await context.addCookies([{ name: 'dash_lang', value: 'en', url: dashboard.url }]);
    await signInInBrowser(page, dashboard.url, who.email, who.password);
    if (options.lang) await context.addCookies([{ name: 'dash_lang', value: options.lang, url: dashboard.url }]);
    await page.goto(`${dashboard.url}${path}`);
    await use(page);
  } finally {
    await context.close();
  }
}

/** Until something has the focus: Chromium runs `autofocus` at a rendering step of its own,
 * which on a loaded machine comes after the load event (CI read the body as focused). */
async function focusSettled(page: Page): Promise<void> {
  await page.waitForFunction('document.activeElement !== null && document.activeElement !== document.body', undefined, { timeout: 5_000 });
}

/** The text under a field, tied to it by aria-describedby. */
async function errorUnder(page: Page, inputSelector: string): Promise<string> {
  const input = page.locator(inputSelector);
  expect(await input.getAttribute('aria-invalid')).toBe('true');
  const ids = (await input.getAttribute('aria-describedby'))!.split(' ');
  const errorId = ids.find((id) => id.endsWith('-error'))!;
  return (await page.locator(`#${errorId}`).textContent())!.trim();
}

describe.skipIf(!haveBrowser)('refused forms in a browser', () => {
  beforeAll(async () => {
    db = testDb();
    await ensureDefaultPlans(db);
    // As production runs it: webhooks go to public addresses only.
    dashboard = await startTestDashboard(db, { allowPrivateWebhookTargets: false });
    browser = await chromium.launch({ executablePath: chromiumPath, args: chromiumArgs });
  });

  afterAll(async () => {
    await browser?.close();
    await dashboard?.close();
    await db?.destroy();
  });

  it('when an admin saves a private webhook address or an impossible threshold, then the alerts page keeps what was typed and says why under each field', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser alerts form test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    await onPageAs(admin, `/orgs/${orgId}/alerts`, async (page) => {

      await page.getByLabel('Webhook URL').fill('http://10.0.0.5/hooks/allowance');
      await page.locator('#alerts-webhook').getByRole('button', { name: 'Save' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.getByLabel('Webhook URL').inputValue()).toBe('http://10.0.0.5/hooks/allowance');
      expect(await errorUnder(page, '#webhook-url')).toContain('this service sends webhooks to public addresses only');

      await page.getByLabel('When').selectOption('percent_used');
      await page.getByLabel('Value').fill('150');
      await page.getByRole('button', { name: 'Add threshold' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.getByLabel('When').inputValue()).toBe('percent_used');
      expect(await page.getByLabel('Value').inputValue()).toBe('150');
      expect(await errorUnder(page, '#threshold-value')).toBe('A threshold is a whole percentage from 1 to 100, or a balance of 0 or more credits.');

      expect(await db('alert_thresholds').where({ organization_id: orgId })).toEqual([]);
      expect((await db('alert_settings').where({ organization_id: orgId }).first('webhook_url'))?.webhook_url ?? null).toBeNull();
    });
  });

  it('when a form is refused, then the focus is on its "Please check the form" summary and the page title starts with "Error: " ("Errore: " in Italian)', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser refused focus test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    const focused = async (page: Page) => {
      await focusSettled(page);
      return page.evaluate<{ role: string; className: string; text: string }>(
        "({ role: document.activeElement.getAttribute('role'), className: document.activeElement.className, text: document.activeElement.textContent.trim() })",
      );
    };
    await onPageAs(admin, `/orgs/${orgId}/alerts`, async (page) => {
      const title = await page.title();
      expect(title).not.toMatch(/^Error/);
      await page.getByLabel('When').selectOption('percent_used');
      await page.getByLabel('Value').fill('150');
      await page.getByRole('button', { name: 'Add threshold' }).click();
      await page.waitForLoadState('load');
      expect(await page.title()).toBe(`Error: ${title}`);
      expect(await focused(page)).toEqual({ role: 'alert', className: 'notice notice-bad', text: 'Please check the form: Value: A threshold is a whole percentage from 1 to 100, or a balance of 0 or more credits.' });
      // The page as drawn after a success is not an error page.
      await page.getByLabel('Value').fill('80');
      await page.getByRole('button', { name: 'Add threshold' }).click();
      await page.waitForLoadState('load');
      expect(await page.title()).toBe(title);

      // Change password: its refusal has the summary now, and it takes the focus too.
      await page.goto(`${dashboard.url}/account/password`);
      await page.getByLabel('Current password').fill('not the password at all');
      await page.getByLabel('New password', { exact: true }).fill('a long enough new password');
      await page.getByLabel('New password, again').fill('a long enough new password');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.waitForLoadState('load');
      expect(await page.title()).toMatch(/^Error: /);
      expect((await focused(page)).text).toBe('Please check the form: Current password: The current password is not right.');
    });
    await onPageAs(admin, `/orgs/${orgId}/alerts`, async (page) => {
      await page.getByLabel('Valore').fill('150');
      await page.getByRole('button', { name: 'Aggiungi soglia' }).click();
      await page.waitForLoadState('load');
      expect(await page.title()).toMatch(/^Errore: /);
      expect((await focused(page)).text).toMatch(/^Controlla il modulo: /);
    }, { lang: 'it' });
  });

  it('when an admin in an Italian Chromium types a threshold with a comma, a thousands separator or a plus sign, then each is refused as typed with its reason, and digits are saved', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser Italian threshold test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    await onPageAs(admin, `/orgs/${orgId}/alerts`, async (page) => {
      const value = page.getByLabel('Valore');
      const add = async (kind: string, typed: string) => {
        await page.getByLabel('Quando').selectOption(kind);
        await value.fill('');
        // Key by key, as a person types: Chromium's number field dropped the comma here and sent 75.
        await value.pressSequentially(typed);
        await page.getByRole('button', { name: 'Aggiungi soglia' }).click();
        await page.waitForLoadState('domcontentloaded');
      };
      expect(await value.getAttribute('type')).toBe('text');
      expect(await value.getAttribute('inputmode')).toBe('numeric');

      for (const [kind, typed] of [['percent_used', '7,5'], ['balance_below', '2.500'], ['balance_below', '2,500']]) {
        await add(kind!, typed!);
        expect(await value.inputValue()).toBe(typed);
        expect(await page.getByLabel('Quando').inputValue()).toBe(kind);
        expect(await errorUnder(page, '#threshold-value')).toBe('un numero intero di sole cifre, ad es. 1000: senza separatori, perché 1.000 è mille in italiano ma uno in inglese');
      }
      await add('percent_used', '+8');
      expect(await value.inputValue()).toBe('+8');
      expect(await errorUnder(page, '#threshold-value')).toBe('un numero intero senza il segno +: scrivi 500, non +500');
      await add('percent_used', '150');
      expect(await errorUnder(page, '#threshold-value')).toBe('Una soglia è una percentuale intera da 1 a 100, oppure un saldo di 0 crediti o più.');
      expect(await db('alert_thresholds').where({ organization_id: orgId })).toEqual([]);

      await add('percent_used', '8');
      expect(await page.locator('.notice').first().textContent()).toContain('Impostazioni degli avvisi salvate.');
      expect(await db('alert_thresholds').where({ organization_id: orgId }).select('kind', 'value')).toEqual([{ kind: 'percent_used', value: 8 }]);
    }, { lang: 'it' });
  });

  it('when an operator adjusts credits by "+500", then the credits field says to drop the plus sign (and how credits are removed), not that it has a separator', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser plus sign test', planId: 'standard' });
    const operator = await createOperator(db);
    const grant = async (page: Page, kind: string, typed: string) => {
      await page.locator('#grant-kind').selectOption(kind);
      await page.locator('#grant-credits').fill(typed);
      await page.locator('#grant-reason').fill('contract amendment');
      await page.locator('#org-grant').getByRole('button').first().click();
      await page.waitForLoadState('domcontentloaded');
    };
    await onPageAs(operator, `/operator/organizations/${orgId}`, async (page) => {
      await grant(page, 'adjustment', '+500');
      expect(await page.locator('#grant-credits').inputValue()).toBe('+500');
      expect(await errorUnder(page, '#grant-credits')).toBe('a whole number without a + sign: 500 adds credits; to remove credits, choose Adjustment and write -500');
      // The period form's fields take no negatives: only the plus sign is said there.
      await page.getByLabel('Credits per period').fill('+500');
      await page.locator('#org-period').getByRole('button', { name: 'Save' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await errorUnder(page, '#credits-per-period')).toBe('a whole number without a + sign: write 500, not +500');
    });
    await onPageAs(operator, `/operator/organizations/${orgId}`, async (page) => {
      await grant(page, 'adjustment', '+500');
      expect(await errorUnder(page, '#grant-credits')).toBe('un numero intero senza il segno +: 500 aggiunge crediti; per toglierne scegli Rettifica e scrivi -500');
    }, { lang: 'it' });
    expect(await db('usage_ledger').where({ organization_id: orgId }).whereIn('entry_type', ['adjustment', 'grant', 'top_up']).whereNot({ actor: 'system' })).toEqual([]);
    expect((await db('organizations').where({ id: orgId }).first('credits_per_period')).credits_per_period).toBeNull();
  });

  it('when an operator\'s invitation or a product\'s quantity is refused, then the organization page keeps what was typed and says why under the field', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser operator form test', planId: 'standard' });
    const operator = await createOperator(db);
    await onPageAs(operator, `/operator/organizations/${orgId}`, async (page) => {

      // The browser takes an address without a dot in its domain; the server does not.
      await page.getByLabel('E-mail').fill('ada@localhost');
      await page.getByLabel('Role').selectOption('finance');
      await page.getByRole('button', { name: 'Create invitation' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.getByLabel('E-mail').inputValue()).toBe('ada@localhost');
      expect(await page.getByLabel('Role').inputValue()).toBe('finance');
      expect(await errorUnder(page, '#invite-email')).toBe('Enter an e-mail address like name@company.it');

      // A number the browser takes, past what a whole number of ours holds.
      const quantity = page.getByLabel('Quantity company-financials');
      await quantity.fill('99999999999999999999');
      await page.getByLabel('Unit company-financials').selectOption('calls');
      await page.locator('form.product-form', { has: quantity }).getByRole('button', { name: 'Save' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.getByLabel('Quantity company-financials').inputValue()).toBe('99999999999999999999');
      expect(await page.getByLabel('Unit company-financials').inputValue()).toBe('calls');
      // Digits only, so refused by its size, not with the separators' reason.
      expect(await errorUnder(page, '#prod-company-financials-q')).toBe('at most 9007199254740991');
      expect(await page.getByLabel('Quantity company-report').inputValue()).toBe('1');

      expect(await db('invitations').where({ organization_id: orgId })).toEqual([]);
      expect(await db('organization_overrides').where({ organization_id: orgId })).toEqual([]);
    });
  });

  it('when a newcomer accepts an invitation with a password too short and a name too long, then both say why under them at once, and the name stays', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser invitation form test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    const { token } = await createInvitation(db, { organizationId: orgId, email: `newcomer-${orgId}@example.test`, role: 'finance', invitedBy: admin.userId });
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${dashboard.url}/invitations/${token}`);
      // Neither field has a length the browser checks: the server refuses both.
      const name = 'N'.repeat(201);
      await page.getByLabel('Your name').fill(name);
      await page.getByLabel('New password', { exact: true }).fill('short');
      await page.getByLabel('New password, again').fill('short');
      await page.getByRole('button', { name: 'Accept invitation' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.getByLabel('Your name').inputValue()).toBe(name);
      expect(await page.getByLabel('New password', { exact: true }).inputValue()).toBe('');
      expect(await page.getByLabel('New password, again').inputValue()).toBe('');
      expect(await errorUnder(page, '#invite-name')).toBe('at most 200 characters');
      expect(await errorUnder(page, '#invite-password')).toBe('at least 12 characters');
      expect(await db('memberships').where({ organization_id: orgId })).toHaveLength(1);
    } finally {
      await context.close();
    }
  });

  it('when an operator tops up less than nothing for a blank reason, then both fields say why under them at once, and what was typed stays', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser credits form test', planId: 'standard' });
    const operator = await createOperator(db);
    await onPageAs(operator, `/operator/organizations/${orgId}`, async (page) => {
      // Both pass the browser's own checks: the credits field has no minimum, and spaces fill a required field.
      await page.locator('#grant-kind').selectOption('top_up');
      await page.locator('#grant-credits').fill('-5');
      await page.locator('#grant-reason').fill('   ');
      await page.locator('#org-grant').getByRole('button', { name: 'Grant credits' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.locator('#grant-kind').inputValue()).toBe('top_up');
      expect(await page.locator('#grant-credits').inputValue()).toBe('-5');
      expect(await page.locator('#grant-reason').inputValue()).toBe('   ');
      expect(await errorUnder(page, '#grant-credits')).toBe('must be positive: a grant or top-up adds credits; an adjustment can remove them');
      expect(await errorUnder(page, '#grant-reason')).toBe('required');
      expect(await db('usage_ledger').where({ organization_id: orgId, entry_type: 'top_up' })).toEqual([]);
    });
  });

  it('when a cap is set for this period only and the operator saves only the credits per period, then the cap field shows the organization\'s own cap, keeps it, and numbers with separators are refused as typed', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser own cap test', planId: 'standard' });
    await setCallsCap(db, { organizationId: orgId, callsCap: 8, actor: 'cli:test', reason: 'deal: eight calls' });
    await setCallsCap(db, { organizationId: orgId, callsCap: 12, thisPeriodOnly: true, actor: 'cli:test', reason: 'this month: twelve' });
    const operator = await createOperator(db);
    const caps = async () => ({
      ...(await db('organizations').where({ id: orgId }).first('credits_per_period', 'calls_cap_per_period', 'calls_cap_own')),
      ...(await db('allowances').where({ organization_id: orgId }).first('calls_cap')),
    });
    await onPageAs(operator, `/operator/organizations/${orgId}`, async (page) => {
      const save = async () => {
        await page.locator('#org-period').getByRole('button', { name: 'Save' }).click();
        await page.waitForLoadState('domcontentloaded');
      };
      expect(await page.getByLabel('Calls cap per period').inputValue()).toBe('8');
      expect(await page.locator('#calls-cap-help').textContent()).toContain('This period: 12, set for this period only.');

      // A thousand, the Italian way, and one and a half, typed key by key as a person does: neither
      // is guessed, both stay as typed (a number field dropped the comma and sent 15).
      for (const typed of ['1.000', '1,5']) {
        await page.getByLabel('Credits per period').fill('');
        await page.getByLabel('Credits per period').pressSequentially(typed);
        await save();
        expect(await page.getByLabel('Credits per period').inputValue()).toBe(typed);
        expect(await errorUnder(page, '#credits-per-period')).toBe('a whole number in digits only, e.g. 1000: no separators, as 1.000 is a thousand in Italian but one in English');
        expect(await caps()).toEqual({ credits_per_period: null, calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 12 });
      }

      await page.getByLabel('Credits per period').fill('500');
      await save();
      expect(await page.locator('.notice').first().textContent()).toContain('Saved.');
      expect(await page.getByLabel('Calls cap per period').inputValue()).toBe('8');
      expect(await caps()).toEqual({ credits_per_period: 500, calls_cap_per_period: 8, calls_cap_own: true, calls_cap: 12 });
      const activity = await page.locator('#org-audit').textContent();
      expect(activity).toContain('Set credits per month to 500');
      expect(activity).not.toContain('calls cap');
    });
  });

  it('when an operator sets rate limits that contradict each other, then every contradicted field says why under it, and what was typed stays', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser limits form test', planId: 'standard' });
    const operator = await createOperator(db);
    await onPageAs(operator, `/operator/organizations/${orgId}`, async (page) => {
      // The standard plan's burst is 40: 50 a second contradicts it, and 30 a minute too.
      await page.getByLabel('Per second').fill('50');
      await page.getByLabel('Per minute').fill('30');
      await page.locator('#org-limits').getByRole('button', { name: 'Save' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await page.getByLabel('Per second').inputValue()).toBe('50');
      expect(await page.getByLabel('Burst').inputValue()).toBe('');
      expect(await page.getByLabel('Per minute').inputValue()).toBe('30');
      expect(await errorUnder(page, '#limit-burst')).toBe('must be at least the per-second limit (50)');
      expect(await errorUnder(page, '#limit-minute')).toBe('must be at least the per-second limit (50)');
      expect(await page.locator('#limit-second').getAttribute('aria-invalid')).toBeNull();
      expect(await db('organizations').where({ id: orgId }).first('rate_per_second', 'rate_per_minute')).toEqual({ rate_per_second: null, rate_per_minute: null });
    });
  });

  it('when a person changes their password from the top bar, then a new one too short is refused under its field, and a good one, double-clicked, changes it once with the page saying so and the person still signed in', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser password change test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    const newPassword = 'a browser-typed new password';
    await onPageAs(admin, `/orgs/${orgId}`, async (page) => {
      await page.getByRole('link', { name: 'Change password' }).click();
      await page.waitForURL(/\/account\/password$/);
      await page.getByLabel('Current password').fill(admin.password);
      await page.getByLabel('New password', { exact: true }).fill('too short');
      await page.getByLabel('New password, again').fill('too short');
      await page.getByRole('button', { name: 'Change password' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(await errorUnder(page, '#new-password')).toBe('at least 12 characters');

      await page.getByLabel('Current password').fill(admin.password);
      await page.getByLabel('New password', { exact: true }).fill(newPassword);
      await page.getByLabel('New password, again').fill(newPassword);
      // Double-clicked: a second POST would carry the old session cookie, which only the first
      // answer replaces; the page sends the form once.
      await page.getByRole('button', { name: 'Change password' }).dblclick({ delay: 50 });
      await page.waitForURL(/done=changed$/);
      expect(await page.getByRole('status').first().textContent()).toContain('Your password has been changed.');
      // Still signed in here, and no wrong guess counted.
      await page.goto(`${dashboard.url}/orgs/${orgId}`);
      expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}`);
      expect(await db('sign_in_attempts').whereRaw('lower(email) = ?', [admin.email.toLowerCase()]).where({ succeeded: false }).count<{ n: number }[]>({ n: '*' })).toEqual([{ n: 0 }]);
    });
    await onPageAs({ email: admin.email, password: newPassword }, `/orgs/${orgId}`, async (page) => {
      expect(new URL(page.url()).pathname).toBe(`/orgs/${orgId}`);
    });
  });
  it('when a wrong password is typed on the sign-in page, then the focus is on what was refused and the page title starts with "Error: "', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser sign-in refused focus test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`${dashboard.url}/sign-in`);
      const title = await page.title();
      await page.getByLabel(/E-mail/).fill(admin.email);
      await page.getByLabel('Password').fill('not the password at all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForLoadState('load');
      expect(await page.title()).toBe(`Error: ${title}`);
      await focusSettled(page);
      expect(await page.evaluate<string | null>('document.activeElement.id')).toBe('sign-in-error');
      expect(await page.getByLabel('Password').getAttribute('aria-invalid')).toBe('true');
    } finally {
      await context.close();
    }
  });

  it('when an admin removes a threshold or rotates the webhook secret, then the browser asks first, saying what follows, and a No changes nothing', async () => {
    const { id: orgId } = await createOrganization(db, { name: 'Browser alerts confirm test', planId: 'standard' });
    const admin = await createMember(db, orgId, 'admin');
    await addThreshold(db, orgId, { kind: 'percent_used', value: 80 });
    const secret = (await alertSettings(db, orgId)).webhookSecret;
    await onPageAs(admin, `/orgs/${orgId}/alerts`, async (page) => {
      const asked: string[] = [];
      let answer = false;
      page.on('dialog', (dialog) => {
        asked.push(dialog.message());
        void (answer ? dialog.accept() : dialog.dismiss());
      });
      const remove = page.locator('#alerts-thresholds').getByRole('button', { name: 'Remove' });
      await remove.click();
      expect(asked).toEqual(['Remove the threshold "Allowance used reaches 80%"? It will send no more alerts.']);
      expect(await db('alert_thresholds').where({ organization_id: orgId })).toHaveLength(1);

      await page.getByText('Show secret').click();
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      expect(asked[1]).toBe('Rotate the signing secret? From the next delivery on, webhooks are signed with the new secret only: until your receiver has it, it will reject them.');
      expect((await alertSettings(db, orgId)).webhookSecret).toBe(secret);

      answer = true;
      await Promise.all([page.waitForURL(/done=saved/), remove.click()]);
      expect(await db('alert_thresholds').where({ organization_id: orgId })).toEqual([]);
      await page.getByText('Show secret').click();
      await page.getByRole('button', { name: 'Rotate secret' }).click();
      await expect.poll(async () => (await alertSettings(db, orgId)).webhookSecret, { timeout: 10_000 }).not.toBe(secret);
      expect(asked).toHaveLength(4);
    });
  });
});
