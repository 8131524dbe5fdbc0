import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointCatalogue } from '../core/companies/endpoint-catalogue.js';
import { createTestOrganization, ensureExampleCompany, exampleCompanyCode, startTestApi, type TestApi } from './api-fixtures.js';

// The /docs page in Debian's headless Chromium: it renders from the npm-installed Swagger UI
// (every request it makes stays on our server), shows the four endpoints, and switches to Italian.

let api: TestApi;
let browser: Browser;

beforeAll(async () => {
  api = await startTestApi({ ownPublicBaseUrl: true });
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
    // A CSP refusal is a console error ("Refused to load/apply/execute …"): none may occur, so
    // the policy allows all Swagger UI needs and no more is asserted below.
    const consoleProblems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') consoleProblems.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (err) => consoleProblems.push(`page error: ${err.message}`));
    page.on('request', (r) => {
      if (!r.url().startsWith(api.url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    page.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });

    const res = await page.goto(`${api.url}/docs`);
    expect(res?.headers()['content-security-policy']).toBe(
      `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self' ${new URL(api.url).origin}; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
    );
    expect(res?.headers()).toMatchObject({ 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'same-origin' });
    await expect.poll(() => page.locator('.opblock-summary-path').count(), { timeout: 20_000 }).toBe(4);
    // The page's own stylesheet (a file, as the CSP allows no <style>) applied: the header's rule.
    // (A string: the tests are type-checked without the DOM's types.)
    expect(await page.evaluate("getComputedStyle(document.querySelector('header.docs')).display")).toBe('flex');
    const paths = await page.locator('.opblock-summary-path').allTextContents();
    expect(paths.map((p) => p.replace(/\u200b/g, '')).sort()).toEqual(endpointCatalogue.map((e) => e.path).sort());
    await expect.poll(() => page.locator('.opblock-summary-description').allTextContents()).toContain('Company report');
    expect(await page.locator('html').getAttribute('lang')).toBe('en');
    // The operations sit under the document's own tag, in the page's language, not "default".
    expect(await page.locator('.opblock-tag').allTextContents()).toEqual([expect.stringMatching(/^Companies/)]);
    // Swagger UI's labels stay its own in English.
    const englishOperation = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/companies/{fiscalCode}/report"]') });
    await englishOperation.locator('.opblock-summary').click();
    await expect.poll(() => englishOperation.locator('.opblock-section-header h4').allTextContents()).toEqual(['Parameters', 'Responses']);
    expect((await englishOperation.locator('.try-out__btn').textContent())?.trim()).toBe('Try it out');
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
    // Swagger UI's own labels in Italian too, around the document's Italian texts.
    const operation = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/companies/{fiscalCode}/report"]') });
    await operation.locator('.opblock-summary').click();
    await expect.poll(() => operation.locator('.opblock-section-header h4').allTextContents()).toEqual(['Parametri', 'Risposte']);
    expect((await operation.locator('.try-out__btn').textContent())?.trim()).toBe('Prova');
    expect(await operation.locator('.parameters th.parameters-col_name').textContent()).toBe('Nome');
    expect(await page.locator('.btn.authorize span').first().textContent()).toBe('Autorizza');
    const shown = (await operation.textContent())!;
    for (const english of ['Parameters', 'Try it out', 'Responses', 'Example Value', 'Media type', 'Controls']) expect(shown).not.toContain(english);
    expect(shown).toContain("Imposta l'header Accept.");

    expect(foreign).toEqual([]);
    expect(failed).toEqual([]);
    expect(consoleProblems).toEqual([]);
    await page.close();
  });

  it('then "Try it out" with a key calls the API from the page, as its CSP allows, and shows the answer', async () => {
    const { key } = await createTestOrganization(api.db);
    const page = await browser.newPage();
    const consoleProblems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleProblems.push(m.text());
    });
    await page.goto(`${api.url}/docs`);
    await page.locator('.btn.authorize').click();
    await page.locator('.auth-container input').fill(key);
    await page.locator('.auth-btn-wrapper .btn.authorize').click();
    await page.locator('.btn-done').click();
    const operation = page.locator('.opblock', { has: page.locator('.opblock-summary-path[data-path="/companies/{fiscalCode}/report"]') });
    await operation.locator('.opblock-summary').click();
    await operation.locator('.try-out__btn').click();
    await operation.locator('input[placeholder="fiscalCode"]').fill(exampleCompanyCode);
    await operation.locator('.execute').click();
    await expect.poll(() => operation.locator('.live-responses-table tbody .response-col_status').first().textContent(), { timeout: 20_000 }).toContain('200');
    expect(consoleProblems).toEqual([]);
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
