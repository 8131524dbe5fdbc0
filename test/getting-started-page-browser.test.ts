import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './api-fixtures.js';

// The getting-started page in Debian's headless Chromium, as a customer opens it on the first
// day: it loads under its CSP with nothing refused (a refusal is a console error), shows the
// guide, its anchors land on their headings, the language switch works, and its links lead to
// pages that answer.

const chromiumPath = '/usr/bin/chromium';
let api: TestApi;
let browser: Browser;

beforeAll(async () => {
  api = await startTestApi();
  if (!existsSync(chromiumPath)) return;
  browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

/** Console errors, page errors, failed and foreign requests of a page, from now on. */
function watch(page: Page) {
  const problems: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('requestfailed', (r) => problems.push(`failed: ${r.url()}`));
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`${r.status()} ${r.url()}`);
  });
  page.on('request', (r) => {
    if (!r.url().startsWith(api.url)) problems.push(`foreign request: ${r.url()}`);
  });
  return problems;
}

describe.skipIf(!existsSync(chromiumPath))('when a customer opens /docs/getting-started in a browser', () => {
  it('then the guide shows, styled, with no console error; its anchors land on their headings; the switch changes language', async () => {
    const page = await browser.newPage({ locale: 'en-US' });
    const problems = watch(page);
    try {
      const res = await page.goto(`${api.url}/docs/getting-started`);
      expect(res?.status()).toBe(200);
      expect(await page.locator('html').getAttribute('lang')).toBe('en');
      expect(await page.locator('h1').textContent()).toBe('Getting started with the Italian company data API');
      expect(await page.title()).toBe('Getting started with the Italian company data API');
      // The stylesheet loaded under the CSP: code blocks have their background.
      // (A string: the tests are type-checked without the DOM's types.)
      expect(await page.evaluate("getComputedStyle(document.querySelector('pre')).backgroundColor")).toBe('rgb(244, 244, 244)');
      expect(await page.locator('table').count()).toBeGreaterThan(3);

      // An anchor of the text (section 5 to section 7) lands on its heading.
      await page.getByRole('link', { name: 'Usage and billing' }).click();
      expect(new URL(page.url()).hash).toBe('#7-usage-and-billing');
      expect(await page.locator(':target').textContent()).toBe('7. Usage and billing');

      await page.click('#lang-it');
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${api.url}/docs/getting-started?lang=it`);
      expect(await page.locator('html').getAttribute('lang')).toBe('it');
      expect(await page.locator('h1').textContent()).toBe("Primi passi con l'API dei dati sulle imprese italiane");
      expect(await page.locator('#lang-it').getAttribute('aria-current')).toBe('true');

      // The Italian guide's link to the English one (getting-started.md in the repository).
      await page.getByRole('link', { name: 'getting-started.md' }).click();
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${api.url}/docs/getting-started?lang=en`);
      expect(await page.locator('html').getAttribute('lang')).toBe('en');

      // A document the API does not serve is text, not a link that would be a 404.
      expect(await page.getByRole('link', { name: 'mcp.md' }).count()).toBe(0);
      expect(await page.locator('main').textContent()).toContain('mcp.md');
      expect(problems).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('then its link back to the reference opens /docs, in the page\'s language', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${api.url}/docs/getting-started?lang=it`);
      const [response] = await Promise.all([page.waitForResponse((r) => new URL(r.url()).pathname === '/docs'), page.click('#reference')]);
      expect(response.status()).toBe(200);
      expect(page.url()).toBe(`${api.url}/docs?lang=it`);
      expect(await page.locator('header.docs h1').textContent()).toBe('Documentazione API');
    } finally {
      await page.close();
    }
  });

  it('then its Markdown link shows the guide as text, in the browser', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${api.url}/docs/getting-started?lang=en`);
      await page.click('#markdown');
      await page.waitForLoadState('domcontentloaded');
      expect(page.url()).toBe(`${api.url}/docs/getting-started?lang=en&format=md`);
      expect((await page.locator('body').textContent())!.startsWith('# Getting started with the Italian company data API')).toBe(true);
    } finally {
      await page.close();
    }
  });
});
