import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createGettingStartedGuide, guideMcpPlaceholder } from '../api/docs/getting-started-guide.js';
import { createTestOrganization, ensureExampleCompany, startTestApi, type TestApi } from './api-fixtures.js';

// GET /docs/getting-started through the real HTTP server: a page for people, rendered from
// docs/getting-started.md (and .it.md), whose links all work where it is served; the Markdown
// itself for tools that ask for it. The page in a browser: getting-started-page-browser.test.ts.

const guides = {
  en: readFileSync(new URL('../docs/getting-started.md', import.meta.url), 'utf8'),
  it: readFileSync(new URL('../docs/getting-started.it.md', import.meta.url), 'utf8'),
} as const;
const firstHeading = (markdown: string) => /^# (.+)$/m.exec(markdown)![1]!;
const decode = (s: string) => s.replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code))).replace(/&amp;/g, '&');
/** The API's address as the guide's files write it: a local `npm start`'s. */
const localBaseUrl = 'http://127.0.0.1:3000';

let api: TestApi;
beforeAll(async () => {
  // Its PUBLIC_BASE_URL is its own address, not the guide's local one: the served guide names it.
  api = await startTestApi({ ownPublicBaseUrl: true });
});
afterAll(async () => {
  await api?.close();
});

describe.each(Object.entries(guides))('when a browser asks for the getting-started guide (%s)', (language, markdown) => {
  const browserHeaders = { Accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'Accept-Language': `${language};q=0.9` };

  it('then it gets a page in that language, headed by the guide\'s first heading, with a way back to the reference and to the other language', async () => {
    for (const url of [`/docs/getting-started?lang=${language}`, '/docs/getting-started']) {
      const res = await fetch(`${api.url}${url}`, { headers: browserHeaders });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-language')).toBe(language);
      expect(res.headers.get('vary')).toMatch(/\bAccept\b.*\bAccept-Language\b/);
      const page = await res.text();
      expect(page).toMatch(new RegExp(`^<!doctype html>\\n<html lang="${language}">`));
      expect(decode(/<h1 id="[^"]+">([^<]*)<\/h1>/.exec(page)![1]!)).toBe(firstHeading(markdown));
      expect(decode(/<title>([^<]*)<\/title>/.exec(page)![1]!)).toBe(firstHeading(markdown));
      expect(page).toContain(`<a id="reference" href="/docs?lang=${language}"`);
      const other = language === 'en' ? 'it' : 'en';
      expect(page).toContain(`<a id="lang-${other}" href="/docs/getting-started?lang=${other}"`);
      expect(page).toContain(`<strong id="lang-${language}" aria-current="true">`);
    }
    // curl with no Accept, as the guide's own section 8 would have it, gets the page too.
    expect((await fetch(`${api.url}/docs/getting-started?lang=${language}`)).headers.get('content-type')).toBe('text/html; charset=utf-8');
  });

  it('then every link on the page works: anchors name a heading, every other link is a page the API serves, none a .md file', async () => {
    const page = await (await fetch(`${api.url}/docs/getting-started?lang=${language}`, { headers: browserHeaders })).text();
    const ids = new Set([...page.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]));
    expect(ids.size, 'ids are unique').toBe([...page.matchAll(/ id="([^"]+)"/g)].length);
    const hrefs = [...page.matchAll(/ href="([^"]+)"/g)].map((m) => decode(m[1]!));
    expect(hrefs.filter((href) => /\.md\b/.test(href))).toEqual([]);
    for (const href of hrefs) {
      if (href.startsWith('#')) {
        expect(ids, href).toContain(href.slice(1));
        continue;
      }
      const url = new URL(href, api.url);
      expect(url.origin, href).toBe(api.url);
      expect((await fetch(url)).status, href).toBe(200);
      if (url.hash) expect(url.pathname).toBe('/docs/getting-started');
    }
    // Each link of the Markdown is on the page: a guide's as its page, a document the API does not
    // serve (for operators, in the repository) as its text alone.
    const links = [...markdown.matchAll(/\[([^\]]+)\]\(([^)]+)\)/g)].map((m) => ({ text: m[1]!, target: m[2]! }));
    expect(links.length).toBeGreaterThan(1);
    for (const { text, target } of links) {
      const guideLanguage = target === 'getting-started.md' ? 'en' : target === 'getting-started.it.md' ? 'it' : undefined;
      if (target.startsWith('#')) expect(page).toContain(`href="${target}"`);
      else if (guideLanguage) expect(page).toContain(`<a href="/docs/getting-started?lang=${guideLanguage}">${text}</a>`);
      else expect(page).toMatch(new RegExp(`[^>]${text.replace(/\./g, '\\.')}[^<]`));
    }
  });

  it('then none of the Markdown\'s syntax is left in the text it shows (a construct the renderer does not know)', async () => {
    const page = await (await fetch(`${api.url}/docs/getting-started?lang=${language}`, { headers: browserHeaders })).text();
    const main = /<main id="guide">([\s\S]*)<\/main>/.exec(page)![1]!;
    const text = decode(main.replace(/<pre>[\s\S]*?<\/pre>|<code>[\s\S]*?<\/code>/g, '').replace(/<[^>]+>/g, ''));
    expect(text.match(/\*|`|\]\(|^\s*#|^\s*\||^\s*[-+] |<|>/gm)).toBeNull();
    // Every fenced block is a <pre>, every table row a <tr>.
    expect(main.match(/<pre>/g)?.length).toBe(markdown.match(/^```\w+$/gm)?.length);
    expect(main.match(/<tr>/g)?.length).toBe(markdown.match(/^\|(?!-)/gm)?.length);
  });

  it('then it carries the headers that keep the page to itself: no script, no framing, nothing loaded from elsewhere', async () => {
    const res = await fetch(`${api.url}/docs/getting-started?lang=${language}`, { headers: browserHeaders });
    expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(res.headers.get('x-frame-options')).toBe('DENY');
    expect(res.headers.get('referrer-policy')).toBe('same-origin');
    const page = await res.text();
    expect(page).not.toMatch(/<script|<style| style=| on\w+=/i);
    const css = await fetch(`${api.url}/docs/assets/guide.css`);
    expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
  });
});

describe.each(Object.entries(guides))('when a tool asks for the guide\'s Markdown (%s)', (language, markdown) => {
  it.each<{ how: string; query: string; headers: Record<string, string>; type: string }>([
    { how: '?format=md', query: '&format=md', headers: {}, type: 'text/plain; charset=utf-8' },
    { how: 'Accept: text/markdown', query: '', headers: { Accept: 'text/markdown' }, type: 'text/markdown; charset=utf-8' },
    { how: 'Accept: text/plain', query: '', headers: { Accept: 'text/plain' }, type: 'text/plain; charset=utf-8' },
    { how: '?format=md with a browser\'s Accept', query: '&format=md', headers: { Accept: 'text/html,*/*;q=0.8' }, type: 'text/plain; charset=utf-8' },
  ])('then with $how it gets the file as it is written, with this API\'s address for the local one', async ({ query, headers, type }) => {
    const res = await fetch(`${api.url}/docs/getting-started?lang=${language}${query}`, { headers });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe(type);
    expect(res.headers.get('content-language')).toBe(language);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(markdown).toContain(localBaseUrl);
    expect(await res.text()).toBe(markdown.replaceAll(localBaseUrl, api.url));
  });

  it('then the page says where its Markdown is', async () => {
    const page = await (await fetch(`${api.url}/docs/getting-started?lang=${language}`)).text();
    expect(page).toContain(`<link rel="alternate" type="text/markdown" href="/docs/getting-started?lang=${language}&amp;format=md">`);
    expect(page).toContain(`<a id="markdown" href="/docs/getting-started?lang=${language}&amp;format=md"`);
  });
});

describe('when the guide is asked for in a format it does not come in', () => {
  it('then the answer is the API\'s error envelope, 422 invalid_params naming the parameter', async () => {
    const res = await fetch(`${api.url}/docs/getting-started?format=pdf`);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const body = (await res.json()) as { error: { code: string; requestId: string; details: unknown } };
    expect(body.error).toMatchObject({ code: 'invalid_params', details: [{ path: 'query.format', message: 'must be md or html' }] });
    expect(body.error.requestId).toBe(res.headers.get('x-request-id'));
  });
});

describe('when the API starts', () => {
  it('then each language\'s guide is read and rendered once, the same bytes for every request', async () => {
    const guide = createGettingStartedGuide({ publicBaseUrl: localBaseUrl, publicMcpUrl: 'http://127.0.0.1:3001' });
    const [first, second] = [await guide.get('en'), await guide.get('en')];
    expect(second).toBe(first);
    expect(first.markdown.toString()).toBe(guides.en);
    expect((await guide.get('it')).html.toString()).toContain('<html lang="it">');
  });

  it('then its PUBLIC_BASE_URL (a trailing slash dropped) takes the local address\'s place, and only that address\'s', async () => {
    const guide = createGettingStartedGuide({ publicBaseUrl: 'https://api.example.com/', publicMcpUrl: undefined });
    for (const language of ['en', 'it'] as const) {
      const { markdown, html } = await guide.get(language);
      expect(markdown.toString()).toBe(guides[language].replaceAll(localBaseUrl, 'https://api.example.com').replaceAll('http://127.0.0.1:3001', guideMcpPlaceholder[language]));
      expect(decode(html.toString())).toContain("export BASE_URL='https://api.example.com'");
      expect(html.toString()).not.toContain(localBaseUrl);
      // The tool server's address is unknown (a deployment without PUBLIC_MCP_URL): a placeholder, not this host's.
      expect(markdown.toString()).not.toContain('127.0.0.1');
    }
  });

  it('then its tool server\'s address (PUBLIC_MCP_URL) takes the local one\'s place in the MCP command, which then names a variable it sets', async () => {
    const guide = createGettingStartedGuide({ publicBaseUrl: 'https://api.example.com', publicMcpUrl: 'https://mcp.example.com/' });
    for (const language of ['en', 'it'] as const) {
      const markdown = (await guide.get(language)).markdown.toString();
      expect(markdown).toBe(guides[language].replaceAll(localBaseUrl, 'https://api.example.com').replaceAll('http://127.0.0.1:3001', 'https://mcp.example.com'));
      const block = /```sh\n(export MCP_URL=.*\n)(claude mcp add .*)\n```/.exec(markdown);
      expect(block?.[1]).toMatch(/^export MCP_URL='https:\/\/mcp\.example\.com' /);
      // The command reads only variables the guide has the reader set: MCP_URL here, API_KEY in step 2.
      expect([...block![2]!.matchAll(/\$(\w+)/g)].map((m) => m[1]).sort()).toEqual(['API_KEY', 'MCP_URL']);
      expect(markdown).toContain("export API_KEY='sk_live_…'");
    }
  });
});

describe.each(Object.entries(guides))('when a customer copies the commands of the guide the API serves (%s)', (language) => {
  it('then they reach that API: the page\'s `export BASE_URL` and step 3\'s curl, with a key, answer its OpenAPI document', async () => {
    await ensureExampleCompany(api.db);
    const org = await createTestOrganization(api.db);
    const page = decode(await (await fetch(`${api.url}/docs/getting-started?lang=${language}`)).text());
    expect(page).not.toContain(localBaseUrl);
    const blocks = [...page.matchAll(/<pre><code class="language-sh">([\s\S]*?)<\/code><\/pre>/g)].map((m) => m[1]!);
    const exportBaseUrl = blocks.flatMap((b) => b.split('\n')).find((line) => line.startsWith('export BASE_URL='))!;
    const checkKey = blocks.flatMap((b) => b.split('\n')).find((line) => line.startsWith('curl ') && line.includes('/openapi.json'))!;
    expect(exportBaseUrl).toContain(`'${api.url}'`);
    // The key is the customer's own; BASE_URL is the page's, whatever the environment says.
    const script = [`export API_KEY='${org.key}'`, exportBaseUrl, checkKey].join('\n');
    const { stdout } = await promisify(execFile)('sh', ['-c', script], { env: { PATH: process.env.PATH }, timeout: 10_000, maxBuffer: 10_000_000 });
    expect((JSON.parse(stdout) as { openapi: string }).openapi).toBe('3.1.0');
  });
});
