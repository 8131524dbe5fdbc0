import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrganization } from '../core/billing/index.js';
import { ensureExampleCompany, startTestApi, type TestApi } from './api-fixtures.js';
import { browserForFile, chromiumPath, createMember, dashboardForFile, signInInBrowser } from './dashboard-fixtures.js';

// The "Try it" command under a new key, copied from the page as the Copy button copies it and
// run in a shell against the real API: it must work as pasted. And the links the keys page gives
// to the API's guide and reference lead there.

const haveBrowser = existsSync(chromiumPath);
const run = promisify(execFile);

describe.skipIf(!haveBrowser)('the keys page and the API it leads to', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi();
    await ensureExampleCompany(api.db);
  });
  afterAll(async () => {
    await api?.close();
  });
  // The dashboard shows the API's address as PUBLIC_BASE_URL gives it (dashboard/compose.ts).
  const env = dashboardForFile({ get apiBaseUrl() { return api.url; } });
  const chromium = browserForFile();

  it.each([
    { lang: 'en', name: 'Name', create: 'Create key', copy: 'Copy command', query: '', title: 'Italian company data API' },
    { lang: 'it', name: 'Nome', create: 'Crea chiave', copy: 'Copia comando', query: '?lang=it', title: 'API dati delle imprese italiane' },
  ] as const)('when an admin creates a key and pastes the command shown under it into a shell ($lang), then the API answers it with the key\'s OpenAPI document in the page\'s language', async ({ lang, name, create, copy, query, title }) => {
    const { id: orgId } = await createOrganization(env.db, { name: `Try it test ${lang}`, planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const context = await chromium.browser.newContext();
    try {
      const page = await context.newPage();
      await signInInBrowser(page, env.dashboard.url, admin.email, admin.password);
      await context.addCookies([{ name: 'dash_lang', value: lang, url: env.dashboard.url }]);
      await page.goto(`${env.dashboard.url}/orgs/${orgId}/keys`);
      await page.getByLabel(name).fill('first call');
      await page.getByRole('button', { name: create }).click();
      await page.waitForLoadState('domcontentloaded');
      const key = (await page.locator('#new-key').textContent())!.trim();
      // What the "Copy command" button copies: the text of #try-it, trimmed (dashboard/assets/app-js.ts).
      const command = (await page.locator('#try-it').textContent())!.trim();
      expect(await page.locator('[data-copy="try-it"]').textContent()).toBe(copy);
      // The address quoted: zsh refuses an unquoted `?` that matches no file.
      expect(command).toBe(`curl -H "Authorization: Bearer ${key}" "${api.url}/openapi.json${query}"`);

      const { stdout } = await run('sh', ['-c', command], { timeout: 10_000 });
      const document = JSON.parse(stdout) as { openapi?: string; info?: { title?: string }; paths?: Record<string, unknown>; error?: unknown };
      expect(document.error).toBeUndefined();
      expect(document.openapi).toBe('3.1.0');
      expect(document.info?.title).toBe(title);
      expect(Object.keys(document.paths ?? {})).toContain('/companies/{fiscalCode}/report');
    } finally {
      await context.close();
    }
  });

  it.each([
    { lang: 'en', guide: 'Getting started: a key, first calls, identifiers, errors', reference: 'API reference', guideTitle: 'Getting started with the Italian company data API', referenceTitle: 'API reference' },
    { lang: 'it', guide: 'Primi passi: la chiave, le prime chiamate, i codici, gli errori', reference: 'Documentazione API', guideTitle: "Primi passi con l'API dei dati sulle imprese italiane", referenceTitle: 'Documentazione API' },
  ] as const)('when an admin follows the keys page\'s links ($lang) then they open the API\'s getting-started guide and its reference, in the page\'s language', async ({ lang, guide, reference, guideTitle, referenceTitle }) => {
    const { id: orgId } = await createOrganization(env.db, { name: `Docs links test ${lang}`, planId: 'standard' });
    const admin = await createMember(env.db, orgId, 'admin');
    const context = await chromium.browser.newContext();
    try {
      const page = await context.newPage();
      await signInInBrowser(page, env.dashboard.url, admin.email, admin.password);
      await context.addCookies([{ name: 'dash_lang', value: lang, url: env.dashboard.url }]);
      const keysPage = `${env.dashboard.url}/orgs/${orgId}/keys`;
      await page.goto(keysPage);
      await page.getByRole('link', { name: guide }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${api.url}/docs/getting-started?lang=${lang}`);
      expect(await page.locator('h1').textContent()).toBe(guideTitle);
      expect(await page.locator('html').getAttribute('lang')).toBe(lang);

      await page.goto(keysPage);
      await page.getByRole('link', { name: reference, exact: true }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${api.url}/docs?lang=${lang}`);
      expect(await page.locator('header.docs h1').textContent()).toBe(referenceTitle);
    } finally {
      await context.close();
    }
  });
});
