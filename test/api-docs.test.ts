import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointCatalogue } from '../core/companies/endpoint-catalogue.js';
import { ensureExampleCompany, startTestApi, type TestApi } from './api-fixtures.js';

// The /docs page in Debian's headless Chromium: it renders from the npm-installed Swagger UI
// (every request it makes stays on our server), shows the four endpoints, and switches to Italian.

let api: TestApi;
let browser: Browser;

beforeAll(async () => {
  api = await startTestApi();
  await ensureExampleCompany(api.db);
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});
afterAll(async () => {
  await browser?.close();
  await api?.close();
});

describe('when a person opens /docs', () => {
  it('then the page loads from our own server, lists the four endpoints and switches to Italian', async () => {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const failed: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(api.url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });

    await page.goto(`${api.url}/docs`);
    await expect.poll(() => page.locator('.opblock-summary-path').count(), { timeout: 20_000 }).toBe(4);
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, '')).sort()).toEqual(endpointCatalogue.map((e) => e.path).sort());
    await expect.poll(() => page.locator('.opblock-summary-description').allTextContents()).toContain('Company report');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    // The operations sit under the document's own tag, in the page's language, not "default".
    expect(await page.locator('.opblock-tag').allTextContents()).toEqual([expect.stringMatching(/^Companies/)]);
    // Swagger UI shows no warning about the document (it did about a jsonSchemaDialect).
    expect(await page.locator('body').textContent()).not.toMatch(/jsonSchemaDialect|Warning:/);

    await page.click('#lang-it');
    await expect.poll(() => page.locator('.opblock-summary-description').allTextContents(), { timeout: 20_000 }).toContain('Report aziendale');
    expect(await page.locator('html').getAttribute('lang')).toBe('it');
    expect(await page.locator('header.docs h1').textContent()).toBe('Documentazione API');
    // The tag's name is the same in both languages (generated clients are named by it); the page
    // heads the group with its Italian x-displayName, followed by the Italian description.
    expect(await page.locator('.opblock-tag').allTextContents()).toEqual([expect.stringMatching(/^Imprese\s*Dati su una singola impresa italiana/)]);
    expect(await page.locator('.opblock-tag').getAttribute('data-tag')).toBe('Companies');

    expect(foreign).toEqual([]);
    expect(failed).toEqual([]);
    await page.close();
  });
});

describe('when a cache sits between people and /docs', () => {
  it('then the page and its document say they vary with Accept-Language, and carry no Markdown where Swagger UI shows plain text', async () => {
    for (const path of ['/docs', '/docs/openapi.json']) {
      const [en, it] = await Promise.all(['en', 'it'].map((lang) => fetch(`${api.url}${path}`, { headers: { 'Accept-Language': lang } })));
      expect([en!.headers.get('content-language'), it!.headers.get('content-language')]).toEqual(['en', 'it']);
      for (const res of [en!, it!]) expect(res.headers.get('vary')).toMatch(/\bAccept-Language\b/);
    }
    // Example summaries are plain text: backticks would show as typed (the profile's two examples did).
    for (const lang of ['en', 'it']) {
      const document = await (await fetch(`${api.url}/docs/openapi.json?lang=${lang}`)).text();
      const summaries = [...document.matchAll(/"summary":"([^"]*)"/g)].map((m) => m[1]);
      expect(summaries.length).toBeGreaterThan(4);
      expect(summaries.filter((s) => s!.includes('`'))).toEqual([]);
    }
  });
});
