import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { THRESHOLD_EVENT } from '../core/alerts/evaluate-thresholds.js';
import { configSchema } from '../core/config/index.js';
import { createCompanyStore } from '../core/companies/company-store.js';
import { createDb, migrateLatest, type Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { ensureSampleData } from '../core/sample-data/index.js';
import { createPostgresUsageSink } from '../core/usage/index.js';
import { createTestOrganization, startTcpProxy, startTestApi, viaPort, type TcpProxy, type TestApi, type TestOrganization, type TestOrganizationOptions } from './api-fixtures.js';
import { createDatabase, dropDatabase, uniqueDatabaseName } from './services/databases.js';

// Every answer the customers' guide shows (docs/getting-started.md and .it.md), compared with
// what the API really answers to the call it documents, field by field, so an example cannot
// drift from the API again. The calls run against the data the guide's examples come from: the
// sample companies `npm start` loads into an empty store (same generator, count and seed), in a
// database of this file's own (the shared one holds other tests' companies, which would change
// the large company's peers).
//
// An answer shown after a one-command `sh` block is that command's, run in a shell as written.
// Any other is provoked here: a company answer by calling its endpoint with the company it
// shows; an error by putting an organization (or the API) in the state the guide describes.
//
// Values that differ from one call or install to the next are not compared (the field must
// still be there):
// - `requestId` and the `X-Request-Id` header: new for every call (they must equal each other);
// - `id` (the company's and each peer's): an internal row id, given by the database as the
//   companies are inserted, so another install numbers them differently (the guide says so);
// - `RateLimit-Remaining`, `RateLimit-Reset` and a 429's `Retry-After`: they depend on the
//   calls made before and on the clock;
// - the reset date in `limit_reached`'s message: the start of the month after the run.
// Nothing else varies: the sample data is generated from a seed with fixed years
// (DEFAULT_LATEST_YEAR), and no answer shown carries a balance.
//
// A block the guide calls trimmed (the text before it says "trimmed"/"accorciat…") may leave
// out fields and list items; what it shows must still be in the answer, in order, value for
// value. Any other block is the whole answer. Shown headers are always a selection (the guide
// says "headers trimmed to those that matter"), each with the API's value.

const run = promisify(execFile);
const read = (file: string) => readFileSync(new URL(`../${file}`, import.meta.url), 'utf8');
const guides = { en: 'docs/getting-started.md', it: 'docs/getting-started.it.md' } as const;
const silent = createLogger({ level: 'silent' });

interface Fence { lang: string; body: string; start: number; end: number }

const fencesOf = (markdown: string): Fence[] =>
  [...markdown.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, body: m[2]!, start: m.index, end: m.index + m[0].length }));

interface Answer { status?: number; headers: Map<string, string>; body: unknown }

interface ShownAnswer {
  /** Where it is, for the test's name. */
  label: string;
  shown: Answer;
  trimmed: boolean;
  /** The one curl command it answers, when the guide shows one right before it. */
  command?: string;
}

function parseHttp(text: string): Answer {
  const headers = new Map<string, string>();
  if (!text.startsWith('HTTP/')) return { headers, body: JSON.parse(text) };
  const [head, ...rest] = text.split(/\r?\n\r?\n/);
  const [statusLine, ...headerLines] = head!.split(/\r?\n/);
  for (const line of headerLines) headers.set(line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim());
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\n\n')) };
}

function shownAnswers(markdown: string): ShownAnswer[] {
  const fences = fencesOf(markdown);
  return fences.flatMap((fence, i) => {
    if (fence.lang !== 'json' && fence.lang !== 'http') return [];
    // A webhook's body is not an API answer (getting-started-guide.test.ts checks it).
    if (fence.body.includes(`"type": "${THRESHOLD_EVENT}"`)) return [];
    const before = fences[i - 1];
    const between = markdown.slice(before?.end ?? 0, fence.start);
    const commands = before?.lang === 'sh' ? before.body.split('\n').filter((line) => line.startsWith('curl ')) : [];
    const line = markdown.slice(0, fence.start).split('\n').length;
    return [{
      label: `line ${line}`,
      shown: parseHttp(fence.body.trim()),
      trimmed: /trimmed|accorciat/i.test(between),
      command: commands.length === 1 ? commands[0] : undefined,
    }];
  });
}

// ---- comparison -------------------------------------------------------------------------------

const nextMonthStart = /\d{4}-\d{2}-01T00:00:00Z/g;
const normalised = (text: string) => text.replace(nextMonthStart, '<next month>');

/** Where the shown value differs from the real one, as "path: shown … real …" lines. */
function differences(shown: unknown, real: unknown, trimmed: boolean, path = ''): string[] {
  const key = path.slice(path.lastIndexOf('.') + 1);
  if (key === 'requestId') return typeof real === 'string' && /^req_[0-9a-f-]{36}$/.test(real) ? [] : [`${path}: not a request id in the answer: ${JSON.stringify(real)}`];
  if (key === 'id') return typeof real === 'string' && typeof shown === 'string' ? [] : [`${path}: shown ${JSON.stringify(shown)}, answered ${JSON.stringify(real)}`];
  if (Array.isArray(shown) && Array.isArray(real)) {
    if (!trimmed) {
      if (shown.length !== real.length) return [`${path}: shows ${shown.length} items, the answer has ${real.length}`];
      return shown.flatMap((item, i) => differences(item, real[i], trimmed, `${path}[${i}]`));
    }
    // A selection of the items, in the answer's order.
    let from = 0;
    for (const [i, item] of shown.entries()) {
      const at = real.findIndex((candidate, j) => j >= from && differences(item, candidate, trimmed).length === 0);
      if (at < 0) return [`${path}[${i}]: not in the answer${real[i] === undefined ? '' : ` (its item ${i}: ${differences(item, real[i], trimmed, `${path}[${i}]`).join('; ')})`}`];
      from = at + 1;
    }
    return [];
  }
  if (isObject(shown) && isObject(real)) {
    const missing = Object.keys(shown).filter((k) => !(k in real)).map((k) => `${path}.${k}: shown, not in the answer`);
    const unshown = trimmed ? [] : Object.keys(real).filter((k) => !(k in shown)).map((k) => `${path}.${k}: in the answer, not shown`);
    const values = Object.keys(shown).filter((k) => k in real).flatMap((k) => differences(shown[k], real[k], trimmed, `${path}.${k}`));
    return [...missing, ...unshown, ...values];
  }
  const same = typeof shown === 'string' && typeof real === 'string' ? normalised(shown) === normalised(real) : Object.is(shown, real);
  return same ? [] : [`${path}: shown ${JSON.stringify(shown)}, answered ${JSON.stringify(real)}`];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const varyingHeaders = new Set(['x-request-id', 'ratelimit-remaining', 'ratelimit-reset']);

function headerDifferences(shown: Answer, real: Answer): string[] {
  const out: string[] = [];
  if (shown.status !== undefined && shown.status !== real.status) out.push(`status: shown ${shown.status}, answered ${real.status}`);
  for (const [name, value] of shown.headers) {
    const actual = real.headers.get(name);
    if (actual === undefined) out.push(`header ${name}: shown, not sent`);
    else if (!varyingHeaders.has(name) && !(name === 'retry-after' && real.status === 429) && actual !== value) out.push(`header ${name}: shown ${value}, sent ${actual}`);
  }
  const requestId = (real.body as { meta?: { requestId?: string }; error?: { requestId?: string } }).meta?.requestId ?? (real.body as { error?: { requestId?: string } }).error?.requestId;
  if (real.headers.size > 0 && real.headers.get('x-request-id') !== requestId) out.push('the X-Request-Id header is not the body\'s requestId');
  return out;
}

// ---- the calls --------------------------------------------------------------------------------

async function fetchAnswer(url: string, key: string | undefined): Promise<Answer> {
  const res = await fetch(url, { headers: key === undefined ? {} : { Authorization: `Bearer ${key}` } });
  return { status: res.status, headers: new Map(res.headers), body: await res.json() };
}

async function runCommand(command: string, env: Record<string, string>): Promise<Answer> {
  const { stdout } = await run('sh', ['-c', command], { env: { ...process.env, ...env }, timeout: 10_000, maxBuffer: 10_000_000 });
  if (!stdout.startsWith('HTTP/')) return { headers: new Map(), body: JSON.parse(stdout) };
  // curl -i: the real header names, lower-cased as the guide's are compared.
  const [head, ...rest] = stdout.split(/\r\n\r\n|\n\n/);
  const [statusLine, ...lines] = head!.split(/\r?\n/);
  const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()] as const));
  return { status: Number(statusLine!.split(' ')[1]), headers, body: JSON.parse(rest.join('\n\n')) };
}

const endpointPaths: Record<string, string> = {
  'company-report': 'report',
  'company-credit-report': 'credit-report',
  'company-profile': 'profile',
  'company-financials': 'financials',
};

describe('the answers the getting-started guide shows', () => {
  let scratch: { serverUrl: string; name: string } | undefined;
  let db: Db;
  let api: TestApi;
  /** An API whose database goes away (the 503s); its store and usage stay on `db`. */
  let cutOff: { api: TestApi; proxy: TcpProxy; cached: TestOrganization; unseen: TestOrganization; direct: Db } | undefined;
  let standard: TestOrganization;

  beforeAll(async () => {
    const serverUrl = inject('databaseUrl');
    scratch = { serverUrl, name: uniqueDatabaseName('guide') };
    const url = await createDatabase(serverUrl, scratch.name);
    db = createDb({ connectionString: url, poolMax: 4, applicationName: 'guide-test' });
    await migrateLatest(db);
    // What `npm start` loads into an empty store (SAMPLE_COMPANIES, SAMPLE_SEED at their defaults).
    const config = configSchema.pick({ SAMPLE_COMPANIES: true, SAMPLE_SEED: true }).parse({});
    await ensureSampleData({ db, count: config.SAMPLE_COMPANIES, seed: config.SAMPLE_SEED, logger: silent });
    api = await startTestApi({ databaseUrl: url });
    // The standard plan's limits, which the guide's RateLimit-Limit shows.
    standard = await createTestOrganization(db, { ratePerSecond: 20, burst: 40, ratePerMinute: 600 });

    const proxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    const direct = createDb({ connectionString: url, poolMax: 2, applicationName: 'guide-test-direct' });
    const cutApi = await startTestApi({
      databaseUrl: viaPort(url, proxy.port),
      entitlementCacheTtlMs: 50,
      store: createCompanyStore({ db: direct, queryTimeoutMs: 2_000, logger: silent }),
      usage: createPostgresUsageSink(direct, { logger: silent }),
    });
    cutOff = { api: cutApi, proxy, direct, cached: await createTestOrganization(db), unseen: await createTestOrganization(db) };
  }, 180_000);

  afterAll(async () => {
    await cutOff?.api.close();
    await cutOff?.proxy.close();
    await cutOff?.direct.destroy();
    await api?.close();
    await db?.destroy();
    if (scratch) await dropDatabase(scratch.serverUrl, scratch.name);
  });

  const organization = (options: TestOrganizationOptions) => createTestOrganization(db, options);
  const flagged = async (flag: 'credits_exhausted' | 'limit_reached') => {
    const org = await organization({});
    await db('allowances').where({ organization_id: org.organizationId }).update({ [flag]: true });
    return org;
  };
  /** Calls until the API refuses one, and returns that answer. */
  const untilRefused = async (url: string, key: string) => {
    for (let i = 0; i < 20; i++) {
      const answer = await fetchAnswer(url, key);
      if (answer.status === 429) return answer;
    }
    throw new Error('never refused');
  };

  /** The call an answer shown without its command documents, made in the state it describes. */
  async function provoke(shown: Answer): Promise<Answer> {
    const body = shown.body as { data?: { identity?: { fiscalCode?: string } }; meta?: { endpoint: string }; error?: { code: string } };
    const company = (code: string, endpoint: string) => `${api.url}/companies/${code}/${endpoint}`;
    if (body.meta) return fetchAnswer(company(body.data!.identity!.fiscalCode!, endpointPaths[body.meta.endpoint]!), standard.key);
    const report = company('LMBDNC79E13H199R', 'report');
    const financials = company('LMBDNC79E13H199R', 'financials');
    switch (body.error?.code) {
      case 'invalid_params':
        return fetchAnswer(company('IT36929190357', 'report'), standard.key);
      case 'rate_limited': {
        const limit = Number(shown.headers.get('ratelimit-limit'));
        // A burst of `limit` a second, or `limit` calls a minute, as the guide's two examples.
        const perMinute = shown.headers.get('ratelimit-reset') !== undefined && Number(shown.headers.get('ratelimit-reset')) > 2;
        const org = await organization(perMinute ? { ratePerSecond: 1_000, burst: 1_000, ratePerMinute: limit } : { ratePerSecond: 1, burst: limit, ratePerMinute: 1_000 });
        return untilRefused(report, org.key);
      }
      case 'limit_reached':
        return fetchAnswer(report, (await flagged('limit_reached')).key);
      case 'credits_exhausted':
        return fetchAnswer(financials, (await flagged('credits_exhausted')).key);
      case 'not_entitled':
        return fetchAnswer(report, (await organization({ endpoints: ['company-financials'] })).key);
      case 'client_not_configured':
        return fetchAnswer(report, (await organization({ withPlan: false })).key);
      case 'auth_unavailable':
      case 'entitlement_unavailable': {
        const { api: other, proxy, cached, unseen } = cutOff!;
        const path = `/companies/LMBDNC79E13H199R/financials`;
        // A key seen before the database went away is known, its plan is not: entitlement_unavailable.
        if ((await fetchAnswer(`${other.url}${path}`, cached.key)).status !== 503) {
          await proxy.cut();
          await new Promise((r) => setTimeout(r, 100));
        }
        return fetchAnswer(`${other.url}${path}`, body.error.code === 'auth_unavailable' ? unseen.key : cached.key);
      }
      default:
        throw new Error(`the guide shows ${JSON.stringify(body.error?.code)} without the command it answers: say here how to provoke it`);
    }
  }

  describe.each(Object.entries(guides))('%s', (_language, file) => {
    const answers = shownAnswers(read(file));

    // Section 4's table of paths and what each answers ("200", "422 `invalid_params` (…)"):
    // the identifier rules as the customer meets them, whitespace included.
    const pathRows = [...read(file).matchAll(/^\| ((?:`\/companies\/[^`]+`(?:, )?)+)[^|]*\| (\d{3})(?: `(\w+)`)?[^|]*\|$/gm)]
      .flatMap((m) => [...m[1]!.matchAll(/`([^`]+)`/g)].map((p) => [p[1]!, Number(m[2]), m[3] ?? ''] as const));

    it('when it is read then it shows answers, and a table of paths with what each answers', () => {
      expect(answers.length).toBeGreaterThan(0);
      expect(pathRows.length).toBeGreaterThanOrEqual(8);
    });

    it.each(pathRows)('when %s is called then it answers %d %s', async (path, status, code) => {
      const answer = await fetchAnswer(`${api.url}${path}`, standard.key);
      const body = answer.body as { error?: { code: string }; meta?: { usage: { quantity: number } } };
      expect(answer.status, JSON.stringify(body)).toBe(status);
      if (code) expect(body.error?.code).toBe(code);
      // A success is billed: its meta says what.
      if (status === 200) expect(body.meta?.usage.quantity).toBeGreaterThan(0);
    });

    it.each(answers.map((a) => [a.label, a] as const))('when the answer at %s is compared with the API\'s then they agree', async (_, { shown, trimmed, command }) => {
      const real = command ? await runCommand(command, { API_KEY: standard.key, BASE_URL: api.url }) : await provoke(shown);
      expect([...headerDifferences(shown, real), ...differences(shown.body, real.body, trimmed)], JSON.stringify(real.body)).toEqual([]);
    });
  });
});
