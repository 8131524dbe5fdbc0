import { execFile } from 'node:child_process';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { THRESHOLD_EVENT, type ThresholdPayload } from '../core/alerts/evaluate-thresholds.js';
import { signWebhookBody } from '../core/alerts/webhook-signature.js';
import { endpointCatalogue } from '../core/companies/endpoint-catalogue.js';
import { errorCodes, statusOf, type ErrorCode } from '../core/errors/index.js';
import { createTestOrganization, ensureExampleCompany, insertCompanies, makeDossier, startTestApi, type TestApi, type TestOrganization } from './api-fixtures.js';

// The customers' guide (docs/getting-started.md and its Italian version) must stay true: each of
// its curl commands is run as written, in a shell, against the real API, and answers as the guide
// shows; each error code it names has the status it gives; each endpoint its path, slug and price.

const run = promisify(execFile);
const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const guides = { en: 'docs/getting-started.md', it: 'docs/getting-started.it.md' } as const;

interface Fence { lang: string; body: string }

const fencesOf = (markdown: string): Fence[] => [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]! }));

/** Each curl command, with the answer the guide shows for it: the next block, when its block holds that one command. */
function curlExamples(markdown: string): { command: string; shown?: Fence }[] {
  const fences = fencesOf(markdown);
  return fences.flatMap((fence, i) => {
    if (fence.lang !== 'sh') return [];
    const commands = fence.body.split('\n').filter((line) => line.startsWith('curl '));
    const next = fences[i + 1];
    const shown = commands.length === 1 && next && next.lang !== 'sh' ? next : undefined;
    return commands.map((command) => ({ command, shown }));
  });
}

/** An answer as `curl` prints it: with `-i`, the status line and headers before the body. */
function parseOutput(output: string): { status?: number; headers: Map<string, string>; body: string } {
  const headers = new Map<string, string>();
  if (!output.startsWith('HTTP/')) return { headers, body: output };
  const [head, ...rest] = output.split(/\r?\n\r?\n/);
  const [statusLine, ...headerLines] = head!.split(/\r?\n/);
  for (const line of headerLines) headers.set(line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim());
  return { status: Number(statusLine!.split(' ')[1]), headers, body: rest.join('\n\n') };
}

const endpointOfPath = (path: string) => endpointCatalogue.find((e) => new RegExp(`^${e.path.replace(/\{\w+\}/, '[^/]+')}$`).test(path));

const unitOf: Record<string, 'calls' | 'credits'> = { call: 'calls', calls: 'calls', chiamata: 'calls', chiamate: 'calls', credit: 'credits', credits: 'credits', credito: 'credits', crediti: 'credits' };

describe.each(Object.entries(guides))('the getting-started guide (%s)', (language, file) => {
  const guide = read(file);

  describe('run against the real API', () => {
    let api: TestApi;
    let org: TestOrganization;
    beforeAll(async () => {
      api = await startTestApi();
      await ensureExampleCompany(api.db);
      org = await createTestOrganization(api.db);
      // The sample sole proprietorship of the examples: a 16-character codice fiscale and a
      // partita IVA of its own.
      await insertCompanies(api.db, [makeDossier({ fiscalCode: 'LMBDNC79E13H199R', vatNumber: '36929190357', legalName: 'Costruzioni di Domenico Lombardo', legalForm: 'DI' })]);
    });
    afterAll(async () => {
      await api?.close();
    });

    const examples = curlExamples(guide);

    it('when it is read then it has a curl command for each of the four endpoints', () => {
      const paths = examples.map((e) => /"\$BASE_URL(\/[^"?]*)/.exec(e.command)?.[1]).filter((p): p is string => p !== undefined);
      expect(new Set(paths.map((p) => endpointOfPath(p)?.slug).filter(Boolean))).toEqual(new Set(endpointCatalogue.map((e) => e.slug)));
    });

    it.each(examples.map((e) => [e.command, e] as const))('when `%s` is run as written then the API answers as the guide shows', async (_, { command, shown }) => {
      const { stdout } = await run('sh', ['-c', command], { env: { ...process.env, API_KEY: org.key, BASE_URL: api.url }, timeout: 10_000, maxBuffer: 10_000_000 });
      const answer = parseOutput(stdout);
      const body = JSON.parse(answer.body) as { data?: unknown; meta?: { endpoint: string; usage: unknown }; error?: { code: string }; openapi?: string };
      const path = /"\$BASE_URL(\/[^"?]*)/.exec(command)![1]!;
      const endpoint = endpointOfPath(path);
      if (path === '/openapi.json') expect(body.openapi).toBe('3.1.0');

      if (!shown) {
        // A command shown without its answer: a company endpoint's success.
        if (endpoint) expect(body.meta?.endpoint).toBe(endpoint.slug);
        return;
      }
      const shownStatus = /^HTTP\/1\.1 (\d{3})/m.exec(shown.body)?.[1];
      if (shownStatus) {
        expect(answer.status, 'the guide shows a status line: the command must print it (curl -i)').toBe(Number(shownStatus));
        // Every header the guide shows is sent.
        const shownHeaders = shown.body.split(/\r?\n\r?\n/)[0]!.split('\n').slice(1).map((line) => line.slice(0, line.indexOf(':')).toLowerCase());
        expect(shownHeaders.filter((name) => !answer.headers.has(name))).toEqual([]);
        if (answer.headers.has('www-authenticate')) expect(shown.body).toContain(`WWW-Authenticate: ${answer.headers.get('www-authenticate')}`);
      }
      const shownCode = /"code":\s*"(\w+)"/.exec(shown.body)?.[1];
      expect(body.error?.code).toBe(shownCode);
      const shownEndpoint = /"endpoint":\s*"([\w-]+)"/.exec(shown.body)?.[1];
      if (shownEndpoint) {
        expect(body.meta?.endpoint).toBe(shownEndpoint);
        expect(endpoint?.slug).toBe(shownEndpoint);
        const usage = /"usage":\s*\{\s*"quantity":\s*(\d+),\s*"unit":\s*"(\w+)"/.exec(shown.body)!;
        expect(body.meta?.usage).toEqual({ quantity: Number(usage[1]), unit: usage[2] });
      }
    });
  });

  it('when it shows an answer then its JSON parses, and an error has the status the error catalogue gives its code', () => {
    for (const fence of fencesOf(guide).filter((f) => f.lang === 'json' || f.lang === 'http')) {
      const [head, body] = fence.lang === 'http' ? fence.body.split(/\n\n/) : [undefined, fence.body];
      const parsed = JSON.parse(body!) as { error?: { code: ErrorCode; requestId: string }; meta?: { requestId: string }; type?: string };
      if (parsed.type === THRESHOLD_EVENT) continue; // a webhook's body, not an answer (below)
      expect(parsed.error?.requestId ?? parsed.meta?.requestId).toMatch(/^req_[0-9a-f-]{36}$/);
      if (head && parsed.error) expect(Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), parsed.error.code).toBe(statusOf(parsed.error.code));
    }
  });

  it('when it lists the error codes then it lists every code of the catalogue, each with its status', () => {
    const rows = [...guide.matchAll(/^\| (\d{3}) \| `(\w+)` \|/gm)].map((m) => [m[2], Number(m[1])] as const);
    expect(rows.map(([code]) => code).sort()).toEqual([...errorCodes].sort());
    for (const [code, status] of rows) expect(status, code).toBe(statusOf(code as ErrorCode));
  });

  it('when it lists the endpoints then each has its path, meta.endpoint and default price', () => {
    const rows = [...guide.matchAll(/^\| `GET (\/companies\/\{\w+\}\/[\w-]+)` \| `([\w-]+)` \| (\d+) (\w+) \|/gm)];
    expect(rows.map((r) => r[2]).sort()).toEqual(endpointCatalogue.map((e) => e.slug).sort());
    for (const [, path, slug, quantity, unit] of rows) {
      const endpoint = endpointCatalogue.find((e) => e.slug === slug)!;
      expect({ path, quantity: Number(quantity), unit: unitOf[unit!] }).toEqual({ path: endpoint.path, ...endpoint.defaultMeasure });
    }
  });

  it('when it shows the alert webhook then its body has the fields a delivery sends, and its verify function accepts a signed delivery and refuses a changed or old one', () => {
    const fences = fencesOf(guide);
    const shown = JSON.parse(fences.find((f) => f.lang === 'json' && f.body.includes(THRESHOLD_EVENT))!.body) as Record<string, unknown>;
    // What the alert runner stores for a crossing, and what each attempt adds (deliver-webhooks.ts).
    const payload: ThresholdPayload = { id: 'whd_x', type: THRESHOLD_EVENT, createdAt: '', organizationId: 'org_x', period: '2026-11', threshold: { id: 'thr_x', kind: 'percent_used', value: 80 }, allowance: { creditsBalance: 0, creditsUsed: 0, callsUsed: 0, callsCap: null, percentUsed: 0 } };
    expect(Object.keys(shown).sort()).toEqual([...Object.keys(payload), 'sentAt', 'attempt'].sort());
    expect(Object.keys(shown.allowance as object).sort()).toEqual(Object.keys(payload.allowance).sort());
    const code = fences.find((f) => f.lang === 'js' && f.body.includes('function verify('))!.body.replace(/^import .*$/m, '');
    const verify = new Function('createHmac', 'timingSafeEqual', `${code}\nreturn verify;`)(createHmac, timingSafeEqual) as (body: string, headers: Record<string, string>, secret: string) => boolean;
    const secret = 'whsec_guide';
    const sentAt = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ ...shown, sentAt: new Date(sentAt * 1000).toISOString() });
    const headers = { 'x-signature': signWebhookBody(secret, body), 'x-webhook-timestamp': String(sentAt) };
    expect(verify(body, headers, secret)).toBe(true);
    expect(verify(body.replace('"attempt":1', '"attempt":2'), headers, secret)).toBe(false);
    expect(verify(body, headers, 'whsec_other')).toBe(false);
    const old = JSON.stringify({ ...shown, sentAt: new Date((sentAt - 600) * 1000).toISOString() });
    expect(verify(old, { 'x-signature': signWebhookBody(secret, old), 'x-webhook-timestamp': String(sentAt - 600) }, secret)).toBe(false);
  });

  it(`when the API serves its Markdown at /docs/getting-started?lang=${language} then it is this file, with no key (and its own address for the local one)`, async () => {
    const api = await startTestApi({ ownPublicBaseUrl: true });
    try {
      // What tools ask for; a browser gets the page made from it (getting-started-page.test.ts).
      for (const res of [await fetch(`${api.url}/docs/getting-started?lang=${language}`, { headers: { Accept: 'text/markdown' } }), await fetch(`${api.url}/docs/getting-started?lang=${language}&format=md`)]) {
        expect(res.status).toBe(200);
        expect(res.headers.get('content-language')).toBe(language);
        expect(await res.text()).toBe(guide.replaceAll('http://127.0.0.1:3000', api.url));
      }
      // The reference page links to it, in its own language.
      expect(await (await fetch(`${api.url}/docs?lang=${language}`)).text()).toContain(`href="/docs/getting-started?lang=${language}"`);
    } finally {
      await api.close();
    }
  });
});

describe('where customers find the guide', () => {
  it('when a customer opens the README then the guide is the first document it links to', () => {
    const readme = read('README.md');
    const firstDocLink = /\]\((docs\/[\w.-]+\.md)\)/.exec(readme)?.[1];
    expect(firstDocLink).toBe('docs/getting-started.md');
  });

  it('when a customer opens docs/api.md then its top sends them to the guide', () => {
    const top = read('docs/api.md').split('\n').slice(0, 6).join('\n');
    expect(top).toContain('[getting-started.md](getting-started.md)');
  });
});
