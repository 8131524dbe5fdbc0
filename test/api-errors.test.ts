import { randomInt } from 'node:crypto';
import { eventsOnBus } from './support/usage-bus.js';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createCompanyStore } from '../core/companies/company-store.js';
import type { CompanyLookups } from '../core/companies/endpoint-catalogue.js';
import { createDb, migrateLatest, type Db } from '../core/db/index.js';
import { errorCatalogue, errorEnvelopeSchema, type ErrorCode } from '../core/errors/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageSink, meteringUnavailable } from '../core/usage/index.js';
import { makeCodiceFiscale, makePartitaIva } from '../core/sample-data/index.js';
import { createApiKey, endOfDayUtc } from '../core/auth/index.js';
import { rotateApiKey } from '../core/key-rotation/index.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { freePort } from './services/free-port.js';
import { rawRequest } from './support/raw-request.js';
import {
  createTestOrganization, insertCompanies, makeDossier, startTcpProxy, startTestApi, viaPort,
  type TestApi, type TestOrganization,
} from './api-fixtures.js';

// Every code of the error catalogue, produced through a real server, with the status of
// decisions.md, the envelope, the request id header and no usage event.

const silent = createLogger({ level: 'silent' });
const company = makeDossier();
let api: TestApi;
let org: TestOrganization;
const cleanups: (() => Promise<void>)[] = [];
const seen = new Set<ErrorCode>();

type Json = Record<string, any>;
async function call(base: string, path: string, init: { key?: string; method?: string; headers?: Record<string, string> } = {}) {
  const res = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.key ? { Authorization: `Bearer ${init.key}` } : {}), ...init.headers },
  });
  const text = await res.text();
  return { res, text, body: (text ? JSON.parse(text) : undefined) as Json };
}

/** Asserts the response is the `{ error }` envelope for `code` with its catalogue status. */
function expectError(result: Awaited<ReturnType<typeof call>>, code: ErrorCode) {
  expect(result.res.status, result.text).toBe(errorCatalogue[code].status);
  const parsed = errorEnvelopeSchema.parse(result.body);
  expect(parsed.error.code).toBe(code);
  expect(result.res.headers.get('x-request-id')).toBe(parsed.error.requestId);
  seen.add(code);
  return parsed.error;
}

const expectRateLimitHeaders = (res: Response) => {
  for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(res.headers.get(h), h).toMatch(/^\d+$/);
};

async function startOther(options: Parameters<typeof startTestApi>[0]) {
  const other = await startTestApi(options);
  cleanups.push(() => other.close());
  return other;
}

async function usageEventCount(db: Db, organizationId: string) {
  return (await eventsOnBus(db, { organizationId })).length;
}

/** A migrated database of this test's own, for locks that must not stall other test files. */
async function migratedScratch(name: string): Promise<{ url: string; db: Db }> {
  const scratch: ScratchDatabase = await createScratchDatabase(name);
  cleanups.push(() => scratch.drop());
  const db = createDb({ connectionString: scratch.url, poolMax: 3 });
  cleanups.push(() => db.destroy());
  await migrateLatest(db);
  return { url: scratch.url, db };
}

/** Holds `table` in ACCESS EXCLUSIVE mode (a migration, a DBA) until the returned function is called. */
async function holdTable(url: string, table: string): Promise<() => void> {
  const locker = createDb({ connectionString: url, poolMax: 1 });
  cleanups.push(() => locker.destroy());
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  await new Promise<void>((resolve) => {
    void locker.transaction(async (trx) => {
      await trx.raw(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
      resolve();
      await released;
    });
  });
  return release;
}

beforeAll(async () => {
  api = await startTestApi();
  await insertCompanies(api.db, [company]);
  org = await createTestOrganization(api.db);
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  await api?.close();
});

describe('when the caller is not authenticated', () => {
  it('then no Authorization header, or a non-bearer one, is missing_api_key (401)', async () => {
    const missing = await call(api.url, `/companies/${company.fiscalCode}/report`);
    expectError(missing, 'missing_api_key');
    // A 401 names the scheme to use (RFC 9110, RFC 6750), as the tool server's do.
    expect(missing.res.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    expectError(await call(api.url, `/companies/${company.fiscalCode}/report`, { headers: { Authorization: `Basic ${org.key}` } }), 'missing_api_key');
  });

  it('then two Authorization headers are missing_api_key (401) whichever comes first, not decided by their order', async () => {
    const other = await createTestOrganization(api.db);
    for (const keys of [[org.key, 'sk_live_0000000000000000000000000000000A'], ['sk_live_0000000000000000000000000000000A', org.key], [org.key, other.key]]) {
      const res = await rawRequest(`${api.url}/companies/${company.fiscalCode}/report`, { headers: keys.flatMap((k) => ['Authorization', `Bearer ${k}`]) });
      expect(res.status, res.body).toBe(401);
      const { error } = errorEnvelopeSchema.parse(JSON.parse(res.body));
      expect(error).toMatchObject({ code: 'missing_api_key', message: 'The request has 2 Authorization headers: send one, Authorization: Bearer <API_KEY>.' });
    }
  });

  it('then a valid key in the URL never authenticates', async () => {
    for (const param of ['api_key', 'key', 'token', 'foo']) {
      const error = expectError(await call(api.url, `/companies/${company.fiscalCode}/report?${param}=${org.key}`), 'missing_api_key');
      expect(error.message).toContain('URL');
    }
  });

  it('then a key in the URL is refused even next to a valid Authorization header, and nothing is charged', async () => {
    const paths = [
      `/companies/${company.fiscalCode}/report?api_key=${org.key}`,
      `/companies/${company.fiscalCode}/report?lang=it&x=${org.key}`,
      // As a parameter's name, percent-encoded, or pasted in place of the company's code.
      `/companies/${company.fiscalCode}/report?${org.key}`,
      `/companies/${company.fiscalCode}/report?x=${org.key.replace('_', '%5F')}`,
      `/companies/${org.key}/profile`,
    ];
    for (const path of paths) {
      const result = await call(api.url, path, { key: org.key });
      const error = expectError(result, 'missing_api_key');
      expect(error.message, path).toContain('URL');
      expect(JSON.stringify(error)).not.toContain(org.key.slice(8));
      expect(await eventsOnBus(api.db, { eventId: error.requestId })).toEqual([]);
    }
    // A parameter named like a key's that holds no key is the caller's own business with a header.
    // (Served, so billed: to an organization of its own, as this file's last test counts the main one's events.)
    const other = await createTestOrganization(api.db);
    expect((await call(api.url, `/companies/${company.fiscalCode}/report?key=quarterly`, { key: other.key })).res.status).toBe(200);
  });

  it('then the access log keeps no key from the path, naming its mode only', async () => {
    const logged: { msg: string; path?: string; status?: number }[] = [];
    const other = await startOther({ logger: createLogger({ level: 'info', write: (line) => logged.push(JSON.parse(line)) }) });
    const own = await createTestOrganization(other.db);
    expect((await call(other.url, `/companies/${own.key}/profile`, { key: own.key })).res.status).toBe(401);
    const line = logged.find((l) => l.msg === 'request' && l.path?.endsWith('/profile'));
    expect(line).toMatchObject({ path: `/companies/sk_${own.key.slice(3, 7)}_[redacted]/profile`, status: 401 });
    expect(JSON.stringify(logged)).not.toContain(own.key.slice(8));
    // Percent-encoded in the path (one letter of its secret, or its underscores): refused as a
    // key in the URL, nothing echoed, and the line names the path decoded with the key redacted.
    const secret = own.key.slice(8);
    const encodedLetter = `${own.key.slice(0, 8)}%${secret.charCodeAt(0).toString(16)}${secret.slice(1)}`;
    for (const encoded of [encodedLetter, own.key.replaceAll('_', '%5F')]) {
      const refused = await call(other.url, `/companies/${encoded}/profile`, { key: own.key });
      expect(refused.res.status, refused.text).toBe(401);
      expect(refused.body.error.message).toContain('URL');
      expect(refused.text).not.toContain(secret.slice(1));
    }
    expect(logged.filter((l) => l.msg === 'request' && l.path?.endsWith('/profile')).map((l) => l.path)).toEqual(Array(3).fill(`/companies/sk_${own.key.slice(3, 7)}_[redacted]/profile`));
    expect(JSON.stringify(logged)).not.toContain(secret.slice(1));
    // A path longer than a log line needs is cut, its length said.
    await call(other.url, `/${'x'.repeat(5_000)}`, { key: own.key });
    expect(logged.find((l) => l.msg === 'request' && l.path?.startsWith('/xxx'))?.path).toBe(`/${'x'.repeat(999)}… (5001 characters)`);
  });

  it('then an unknown key is invalid_api_key (401)', async () => {
    const unknown = await call(api.url, `/companies/${company.fiscalCode}/report`, { key: 'sk_live_0000000000000000000000000000000A' });
    // Nothing is said of a key the caller cannot show to be ours.
    expect(expectError(unknown, 'invalid_api_key').message).toBe(errorCatalogue.invalid_api_key.message);
    expect(unknown.res.headers.get('www-authenticate')).toBe('Bearer realm="api", error="invalid_token"');
  });

  it('then a token that is not key-shaped, or a key of ours revoked, expired, past its rotation\'s grace or personal, is invalid_api_key (401) saying which', async () => {
    const path = `/companies/${company.fiscalCode}/report`;
    const refusal = async (key: string) => expectError(await call(api.url, path, { key }), 'invalid_api_key').message;
    const shape = 'The bearer token does not look like an API key: keys are sk_live_ or sk_test_ followed by 32 letters and digits';
    expect(await refusal('hello')).toBe(`${shape}.`);
    expect(await refusal(org.key.slice(0, -1))).toBe(`${shape} (this one has 31 after sk_live_: copy the whole key).`);
    expect(await refusal(`${org.key}x`)).toBe(`${shape} (this one has 33 after sk_live_: copy the whole key).`);

    const revoked = await createApiKey(api.db, { organizationId: org.organizationId, name: 'revoked' });
    await api.db('api_keys').where({ id: revoked.record.id }).update({ revoked_at: new Date('2025-03-04T05:06:07Z') });
    expect(await refusal(revoked.key)).toBe('This API key was revoked on 2025-03-04 05:06 UTC. Use another key of the organization, or have an admin create one in the dashboard.');

    const expired = await createApiKey(api.db, { organizationId: org.organizationId, name: 'expired' });
    await api.db('api_keys').where({ id: expired.record.id }).update({ expires_at: endOfDayUtc('2025-01-31') });
    expect(await refusal(expired.key)).toBe('This API key expired on 2025-01-31 23:59 UTC. If it was rotated, use its replacement; otherwise have an admin create a key in the dashboard.');

    // Rotated two hours ago with an hour's grace: it stopped an hour ago.
    const rotated = await createApiKey(api.db, { organizationId: org.organizationId, name: 'rotated' });
    const rotatedAt = new Date(Date.now() - 7_200_000);
    await rotateApiKey(api.db, { keyId: rotated.record.id, organizationId: org.organizationId, graceSeconds: 3_600, by: 'test', now: rotatedAt });
    const graceEnd = new Date(rotatedAt.getTime() + 3_600_000).toISOString().slice(0, 16).replace('T', ' ');
    expect(await refusal(rotated.key)).toBe(`This API key expired on ${graceEnd} UTC. If it was rotated, use its replacement; otherwise have an admin create a key in the dashboard.`);

    const personal = await createApiKey(api.db, { organizationId: org.organizationId, name: 'personal', kind: 'personal' });
    expect(await refusal(personal.key)).toBe('This is a personal API key: the API and the tool server take organization keys only. Use an organization key (dashboard, API keys).');
  });
});

describe('when the request itself is wrong', () => {
  it('then a malformed fiscal code is invalid_params (422) with details and rate-limit headers', async () => {
    for (const bad of ['123', 'ABCDEFGHIJKLMNOPQ', '1234567890X']) {
      const result = await call(api.url, `/companies/${bad}/credit-report`, { key: org.key });
      const error = expectError(result, 'invalid_params');
      expect(error.details).toEqual([{ path: 'path.fiscalCode', message: expect.any(String) }]);
      expectRateLimitHeaders(result.res);
    }
  });

  it('then an empty parameter is that endpoint\'s invalid_params (422), a taxId of spaces is looked up (404, as the spec accepts any non-empty one), and spaces around a real one are dropped', async () => {
    // Its own organization: the padded calls succeed, and this file checks that the main one paid nothing.
    const payer = await createTestOrganization(api.db);
    const document = (await call(api.url, '/openapi.json', { key: org.key })).body as { paths: Record<string, { get: { responses: Record<string, { content: Record<string, { examples: Record<string, { value: { error: { details: unknown } } }> }> }> } }> };
    for (const [endpoint, param, template] of [['profile', 'taxId', '{taxId}'], ['financials', 'taxId', '{taxId}'], ['report', 'fiscalCode', '{fiscalCode}'], ['credit-report', 'fiscalCode', '{fiscalCode}']] as const) {
      const empty = await call(api.url, `/companies//${endpoint}`, { key: org.key });
      const refused = expectError(empty, 'invalid_params').details;
      expect(refused).toEqual([{ path: `path.${param}`, message: param === 'taxId' ? 'must not be empty' : expect.stringMatching(/^must be an 11-digit code/) }]);
      expectRateLimitHeaders(empty.res);
      if (param === 'taxId') {
        // The served document's 422 example says what the server says.
        expect(document.paths[`/companies/${template}/${endpoint}`]!.get.responses['422']!.content['application/json']!.examples.invalid_params!.value.error.details).toEqual(refused);
        const blank = await call(api.url, `/companies/%20%20/${endpoint}`, { key: org.key });
        expect(expectError(blank, 'not_found').message).toBe('No company has the tax ID "  ".');
        // A long one is echoed in part: the message is for a person, not a copy of the URL.
        const long = await call(api.url, `/companies/${'A'.repeat(5_000)}/${endpoint}`, { key: org.key });
        expect(expectError(long, 'not_found').message).toBe(`No company has the tax ID "${'A'.repeat(64)}"… (5000 characters).`);
        const padded = await call(api.url, `/companies/%20${company.fiscalCode}%20/${endpoint}`, { key: payer.key });
        expect(padded.res.status, padded.text).toBe(200);
      }
    }
  });

  it('then an Italian code typed wrong says how to fix it: a lost leading zero, an IT prefix the report refuses, a check digit or character that cannot match', async () => {
    // Served calls go to an organization of its own: this file checks that the main one paid nothing.
    const payer = await createTestOrganization(api.db);
    const onFile = makePartitaIva(randomInt(1, 1_000_000), 15); // below 1,000,000: a leading zero
    await insertCompanies(api.db, [makeDossier({ fiscalCode: onFile, vatNumber: onFile })]);
    const tenDigits = onFile.slice(1);
    const shape = 'must be an 11-digit code or a 16-character codice fiscale';

    // A spreadsheet dropped the zero: the report's 422 and the profile's 404 both say so.
    for (const endpoint of ['report', 'credit-report']) {
      const refused = expectError(await call(api.url, `/companies/${tenDigits}/${endpoint}`, { key: org.key }), 'invalid_params');
      const detail = `${shape}; it has 10 digits: a leading zero may have been lost (${onFile})`;
      expect(refused.details).toEqual([{ path: 'path.fiscalCode', message: detail }]);
      expect(refused.message).toBe(`The path's fiscalCode ${detail}.`);
    }
    for (const endpoint of ['profile', 'financials']) {
      const missing = expectError(await call(api.url, `/companies/${tenDigits}/${endpoint}`, { key: org.key }), 'not_found');
      expect(missing.message).toBe(`No company has the tax ID "${tenDigits}"; it has 10 digits: a leading zero may have been lost (${onFile}).`);
    }

    // The VAT number as invoices write it: found by the profile and financials, refused by the reports (the spec's pattern), saying what to send.
    for (const endpoint of ['report', 'credit-report']) {
      for (const vat of [`IT${onFile}`, `it${onFile}`]) {
        const refused = expectError(await call(api.url, `/companies/${vat}/${endpoint}`, { key: org.key }), 'invalid_params');
        expect(refused.details).toEqual([{ path: 'path.fiscalCode', message: `${shape}; drop the IT prefix: ${onFile}` }]);
      }
    }
    for (const endpoint of ['profile', 'financials']) {
      const found = await call(api.url, `/companies/IT${onFile}/${endpoint}`, { key: payer.key });
      expect(found.res.status, found.text).toBe(200);
    }

    // A code pasted with a space (%20) before, after or in it: the report's 422 says to drop them, and what is left.
    for (const [path, hint] of [
      [`%20${onFile}`, `drop the spaces: ${onFile}`],
      [`${onFile}%20`, `drop the spaces: ${onFile}`],
      [`${onFile.slice(0, 4)}%20${onFile.slice(4)}`, `drop the spaces: ${onFile}`],
      [`%20IT${onFile}`, `drop the spaces; drop the IT prefix: ${onFile}`],
      [`${tenDigits.slice(0, 5)}%20${tenDigits.slice(5)}`, `drop the spaces; it has 10 digits: a leading zero may have been lost (${onFile})`],
    ]) {
      const refused = expectError(await call(api.url, `/companies/${path}/report`, { key: org.key }), 'invalid_params');
      expect(refused.details).toEqual([{ path: 'path.fiscalCode', message: `${shape}; ${hint}` }]);
    }
    // A name that makes a codice fiscale's layout without its spaces (omocodia letters for its
    // digits) is no code: no hint to drop them.
    expect(expectError(await call(api.url, '/companies/Villa%20Estense%20Srls/report', { key: org.key }), 'invalid_params').details).toEqual([{ path: 'path.fiscalCode', message: shape }]);
    expect(expectError(await call(api.url, '/companies/Villa%20Estense%20Srls/profile', { key: org.key }), 'not_found').message).toBe('No company has the tax ID "VILLA ESTENSE SRLS".');
    // The profile, which finds a code with spaces around it, says the same of spaces in it.
    const spaced = `${onFile.slice(0, 4)} ${onFile.slice(4)}`;
    expect(expectError(await call(api.url, `/companies/${encodeURIComponent(spaced)}/profile`, { key: org.key }), 'not_found').message)
      .toBe(`No company has the tax ID "${spaced}"; drop the spaces: ${onFile}.`);

    // A check digit that does not match: still 404 not_found, saying the code cannot be real.
    const wrongDigit = `${onFile.slice(0, 10)}${(Number(onFile[10]) + 1) % 10}`;
    const mistyped = 'its check digit does not match: it is mistyped, not a company we lack.';
    expect(expectError(await call(api.url, `/companies/${wrongDigit}/report`, { key: org.key }), 'not_found').message).toBe(`No company has the fiscal code ${wrongDigit}; ${mistyped}`);
    expect(expectError(await call(api.url, `/companies/it${wrongDigit}/profile`, { key: org.key }), 'not_found').message).toBe(`No company has the tax ID "IT${wrongDigit}"; ${mistyped}`);
    const person = makeCodiceFiscale({ surname: 'Verdi', name: 'Luca', sex: 'M', birthYear: 1970 + randomInt(40), birthMonth: 1 + randomInt(12), birthDay: 1 + randomInt(28), belfiore: 'Z404' });
    const wrongChar = `${person.slice(0, 15)}${person[15] === 'A' ? 'B' : 'A'}`;
    expect(expectError(await call(api.url, `/companies/${wrongChar.toLowerCase()}/credit-report`, { key: org.key }), 'not_found').message)
      .toBe(`No company has the fiscal code ${wrongChar}; its check character does not match: it is mistyped, not a company we lack.`);

    // A code that may be real but is not on file gets no hint; a company on file answers whatever its check digit.
    const absent = makePartitaIva(randomInt(1_000_000, 9_999_999), 15);
    expect(expectError(await call(api.url, `/companies/${absent}/report`, { key: org.key }), 'not_found').message).toBe(`No company has the fiscal code ${absent}.`);
    expect(expectError(await call(api.url, `/companies/${person}/report`, { key: org.key }), 'not_found').message).toBe(`No company has the fiscal code ${person}.`);
    const oddOnFile = `${absent.slice(0, 10)}${(Number(absent[10]) + 1) % 10}`;
    await insertCompanies(api.db, [makeDossier({ fiscalCode: oddOnFile })]);
    const served = await call(api.url, `/companies/${oddOnFile}/report`, { key: payer.key });
    expect(served.res.status, served.text).toBe(200);
  });

  it('then an unknown path, in any case or with a trailing slash, is unknown_endpoint (404) and not charged', async () => {
    const before = await usageEventCount(api.db, org.organizationId);
    expectError(await call(api.url, '/companies', { key: org.key }), 'unknown_endpoint');
    expectError(await call(api.url, `/companies/${company.fiscalCode}/reports`, { key: org.key }), 'unknown_endpoint');
    expectError(await call(api.url, `/COMPANIES/${company.fiscalCode}/REPORT`, { key: org.key }), 'unknown_endpoint');
    const trailing = await call(api.url, `/companies/${company.fiscalCode}/report/`, { key: org.key });
    expectError(trailing, 'unknown_endpoint');
    // Answered before the key is read, as the OpenAPI document's RateLimit-Limit says: not counted.
    expect(trailing.res.headers.get('ratelimit-limit')).toBeNull();
    expect(await usageEventCount(api.db, org.organizationId)).toBe(before);
  });

  it('then an unknown path\'s message echoes the method and path and names the paths there are, and a trailing slash or upper case says what to send', async () => {
    const endpoints = 'The API answers GET /companies/{fiscalCode}/report, …/credit-report, /companies/{taxId}/profile, …/financials; reference at /docs.';
    const message = async (path: string, method = 'GET') => expectError(await call(api.url, path, { key: org.key, method }), 'unknown_endpoint').message;
    expect(await message('/')).toBe(`No endpoint GET /. ${endpoints}`);
    expect(await message('/companies')).toBe(`No endpoint GET /companies. ${endpoints}`);
    expect(await message('/v1/companies/00000000000/report', 'POST')).toBe(`No endpoint POST /v1/companies/00000000000/report. ${endpoints}`);
    const send = (path: string) => ` Paths are lower case, with no trailing slash: send GET ${path}.`;
    const report = `/companies/${company.fiscalCode}/report`;
    expect(await message(`${report}/`)).toBe(`No endpoint GET ${report}/.${send(report)} ${endpoints}`);
    expect(await message(report.toUpperCase())).toBe(`No endpoint GET ${report.toUpperCase()}.${send(report)} ${endpoints}`);
    expect(await message('/Docs/')).toBe(`No endpoint GET /Docs/.${send('/docs')} ${endpoints}`);
    // A long path is echoed in part; a key pasted into one is not echoed at all.
    expect(await message(`/${'x'.repeat(3_000)}`)).toBe(`No endpoint GET /${'x'.repeat(99)}…. ${endpoints}`);
    const keyInPath = await message(`/companies/${org.key}/reports`, 'POST');
    expect(keyInPath).toBe(`No endpoint POST /companies/sk_live_[redacted]/reports. ${endpoints}`);
    expect(await message('/docs/assets/nothing.js')).toBe(`No endpoint GET /docs/assets/nothing.js. ${endpoints}`);
    // Names every object has are not files of the docs page: 404 like any other, not a 500.
    for (const name of ['constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty']) {
      expect(await message(`/docs/assets/${name}`), name).toBe(`No endpoint GET /docs/assets/${name}. ${endpoints}`);
    }
  });

  it('then an unknown path of thousands of slashes is answered at once, before any key is read: its hint does not backtrack', async () => {
    // 16,000 slashes and a letter fit a request line (and the gateway's buffer). Trimming the
    // trailing slashes by a regular expression took about a second a request here, while the
    // event loop served nobody else; the test allows far more than the loop needs now.
    const path = `/${'/'.repeat(16_000)}a`;
    const started = performance.now();
    const res = await rawRequest(`${api.url}${path}`, { headers: [] });
    const elapsed = performance.now() - started;
    expect(res.status, res.body).toBe(404);
    expect(errorEnvelopeSchema.parse(JSON.parse(res.body)).error.code).toBe('unknown_endpoint');
    expect(elapsed).toBeLessThan(300);
    // An answer that echoes what the caller sent tells browsers not to sniff it into a page; a 2xx too.
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const served = await call(api.url, `/companies/${company.fiscalCode}/profile`, { key: (await createTestOrganization(api.db)).key });
    expect(served.res.status).toBe(200);
    expect(served.res.headers.get('x-content-type-options')).toBe('nosniff');
  });

  it('then /openapi.json without a key, or with a refused one, says where the document that needs none is', async () => {
    const publicDocument = ' Without a key, GET /docs/openapi.json describes every endpoint at default prices.';
    const missing = expectError(await call(api.url, '/openapi.json'), 'missing_api_key');
    expect(missing.message).toBe(`${errorCatalogue.missing_api_key.message}${publicDocument}`);
    const refused = expectError(await call(api.url, '/openapi.json', { key: 'sk_live_0000000000000000000000000000000A' }), 'invalid_api_key');
    expect(refused.message).toBe(`${errorCatalogue.invalid_api_key.message}${publicDocument}`);
    expect((await call(api.url, '/docs/openapi.json')).res.status).toBe(200);
  });

  it('then another method or HEAD on one of the four paths is 405 unknown_endpoint with Allow: GET (decisions.md)', async () => {
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
      for (const endpoint of ['report', 'credit-report', 'profile', 'financials']) {
        const result = await call(api.url, `/companies/${company.fiscalCode}/${endpoint}`, { key: org.key, method });
        expect(result.res.status, `${method} ${endpoint}`).toBe(405);
        expect(result.res.headers.get('allow')).toBe('GET');
        const error = errorEnvelopeSchema.parse(result.body).error;
        expect(error).toMatchObject({ code: 'unknown_endpoint', message: `${method} /companies/${company.fiscalCode}/${endpoint}: this path only answers GET (the API is read-only; reference at /docs).` });
        expect(result.res.headers.get('x-request-id')).toBe(error.requestId);
      }
    }
    const head = await fetch(`${api.url}/companies/${company.fiscalCode}/report`, { method: 'HEAD', headers: { Authorization: `Bearer ${org.key}` } });
    expect(head.status).toBe(405);
    expect(head.headers.get('allow')).toBe('GET');
  });

  it('then another method on a path that answers HEAD too (/openapi.json, /docs, /healthz) is 405 with Allow: GET, HEAD', async () => {
    for (const path of ['/openapi.json', '/docs', '/docs/openapi.json', '/docs/getting-started', '/healthz']) {
      const head = await fetch(`${api.url}${path}`, { method: 'HEAD', headers: { Authorization: `Bearer ${org.key}` } });
      expect(head.status, `HEAD ${path}`).toBe(200);
      const result = await call(api.url, path, { key: org.key, method: 'POST' });
      expect(result.res.status, path).toBe(405);
      expect(result.res.headers.get('allow'), path).toBe('GET, HEAD');
      expect(errorEnvelopeSchema.parse(result.body).error).toMatchObject({ code: 'unknown_endpoint', message: `POST ${path}: this path only answers GET and HEAD (the API is read-only; reference at /docs).` });
    }
  });

  it('then an unknown company is not_found (404), with rate-limit headers', async () => {
    const result = await call(api.url, '/companies/00000000000/report', { key: org.key });
    // The message names what was looked up, as the tool server's does.
    expect(expectError(result, 'not_found').message).toBe('No company has the fiscal code 00000000000.');
    expectRateLimitHeaders(result.res);
    const byTaxId = await call(api.url, '/companies/it%2299/profile', { key: org.key });
    expect(expectError(byTaxId, 'not_found').message).toBe('No company has the tax ID "IT\\"99".');
  });

  it('then a tax ID holding a NUL (%00) is not_found (404), not a store failure', async () => {
    for (const path of [`/companies/${company.fiscalCode}%00/profile`, '/companies/%00/financials']) {
      expectError(await call(api.url, path, { key: org.key }), 'not_found');
    }
  });
});

describe('when the organization may not make the call', () => {
  it('then an organization without a plan is client_not_configured (403)', async () => {
    const unprovisioned = await createTestOrganization(api.db, { withPlan: false });
    expectError(await call(api.url, `/companies/${company.fiscalCode}/financials`, { key: unprovisioned.key }), 'client_not_configured');
  });

  it('then an endpoint outside the plan is not_entitled (403) while the plan\'s own endpoint works', async () => {
    const financialsOnly = await createTestOrganization(api.db, { endpoints: ['company-financials'] });
    expectError(await call(api.url, `/companies/${company.fiscalCode}/report`, { key: financialsOnly.key }), 'not_entitled');
    expect((await call(api.url, `/companies/${company.fiscalCode}/financials`, { key: financialsOnly.key })).res.status).toBe(200);
  });

  it('then the credits_exhausted flag refuses credits-priced calls (402) but not calls-priced ones', async () => {
    const own = await createTestOrganization(api.db);
    await api.db('allowances').where({ organization_id: own.organizationId }).update({ credits_exhausted: true });
    await expect.poll(async () => (await call(api.url, `/companies/${company.fiscalCode}/financials`, { key: own.key })).res.status, { timeout: 5_000 }).toBe(402);
    expectError(await call(api.url, `/companies/${company.fiscalCode}/financials`, { key: own.key }), 'credits_exhausted');
    expect((await call(api.url, `/companies/${company.fiscalCode}/report`, { key: own.key })).res.status).toBe(200);
  });

  it('then calls made one after another, faster than the worker applies them, cannot spend past the balance or the calls cap', async () => {
    // No billing worker runs here: every served call's event stays on the bus, unapplied.
    const own = await createTestOrganization(api.db);
    await api.db('allowances').where({ organization_id: own.organizationId }).update({ credits_balance: 13, calls_cap: 2 });
    const status = async (endpoint: string) => (await call(api.url, `/companies/${company.fiscalCode}/${endpoint}`, { key: own.key })).res.status;
    // 13 credits pay the financials (5) and the profile (8), and then nothing more.
    expect([await status('financials'), await status('profile'), await status('financials')]).toEqual([200, 200, 402]);
    // A cap of 2 calls serves two reports.
    expect([await status('report'), await status('report'), await status('report')]).toEqual([200, 200, 429]);
    expect(await usageEventCount(api.db, own.organizationId)).toBe(4);
  });

  it('then with credits_exhausted a product priced at 0 credits is still served: it costs nothing', async () => {
    const own = await createTestOrganization(api.db);
    await api.db('plan_entitlements').where({ plan_id: own.planId, product: 'company-financials' }).update({ quantity: 0 });
    await api.db('allowances').where({ organization_id: own.organizationId }).update({ credits_exhausted: true });
    await expect.poll(async () => (await call(api.url, `/companies/${company.fiscalCode}/profile`, { key: own.key })).res.status, { timeout: 5_000 }).toBe(402);
    const free = await call(api.url, `/companies/${company.fiscalCode}/financials`, { key: own.key });
    expect(free.res.status).toBe(200);
    expect((free.body as any).meta.usage).toEqual({ quantity: 0, unit: 'credits' });
  });

  it('then the limit_reached flag refuses calls-priced calls (429, Retry-After) but not credits-priced ones', async () => {
    const own = await createTestOrganization(api.db);
    await api.db('allowances').where({ organization_id: own.organizationId }).update({ limit_reached: true });
    await expect.poll(async () => (await call(api.url, `/companies/${company.fiscalCode}/report`, { key: own.key })).res.status, { timeout: 5_000 }).toBe(429);
    const result = await call(api.url, `/companies/${company.fiscalCode}/report`, { key: own.key });
    expectError(result, 'limit_reached');
    expect(Number(result.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call(api.url, `/companies/${company.fiscalCode}/financials`, { key: own.key })).res.status).toBe(200);
  });

  it('then calls beyond the rate limit are rate_limited (429) with Retry-After and RateLimit-* headers', async () => {
    const own = await createTestOrganization(api.db, { ratePerSecond: 1, burst: 2, ratePerMinute: 1_000 });
    const statuses: number[] = [];
    let limited: Awaited<ReturnType<typeof call>> | undefined;
    for (let i = 0; i < 5 && !limited; i++) {
      const result = await call(api.url, `/companies/${company.fiscalCode}/financials`, { key: own.key });
      statuses.push(result.res.status);
      if (result.res.status === 429) limited = result;
      else expectRateLimitHeaders(result.res);
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expectError(limited!, 'rate_limited');
    expect(Number(limited!.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited!.res.headers.get('ratelimit-remaining')).toBe('0');
    expectRateLimitHeaders(limited!.res);
  });
});

describe('when something behind the API fails', () => {
  it('then an unexpected error is internal_error (500) and nothing of it leaks', async () => {
    const leaky: CompanyLookups = {
      companyReport: () => Promise.reject(new Error('SELECT secret FROM companies WHERE password = 1')),
      creditReport: () => Promise.reject(new Error('SELECT secret')),
      companyProfile: () => Promise.reject(new Error('SELECT secret')),
      companyFinancials: () => Promise.reject(new Error('SELECT secret')),
    };
    const other = await startOther({ store: leaky });
    const own = await createTestOrganization(other.db);
    const result = await call(other.url, `/companies/${company.fiscalCode}/report`, { key: own.key });
    expectError(result, 'internal_error');
    expect(result.text).not.toMatch(/SELECT|secret|password|at .*\.ts/);
    expect(await usageEventCount(other.db, own.organizationId)).toBe(0);
  });

  it('then a usage event that cannot be made durable turns the call into an error, never a 2xx', async () => {
    const other = await startOther({ usage: { publish: () => Promise.reject(new Error('disk full')), close: async () => {} } });
    const own = await createTestOrganization(other.db);
    const result = await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: own.key });
    expectError(result, 'internal_error');
  });

  it('then a usage event whose commit is held past the deadline is refused, 503 entitlement_unavailable, in time; its INSERT is cancelled, so the call is not charged once the hold goes', async () => {
    const bus = await migratedScratch('api_usage_deadline');
    const logged: { level: string; msg: string }[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => logged.push(JSON.parse(line)) });
    const other = await startOther({ usage: createPostgresUsageSink(bus.db, { deadlineMs: 500, logger }) });
    const own = await createTestOrganization(other.db);

    // A migration or a DBA holding the bus's table: the INSERT waits for the lock.
    const release = await holdTable(bus.url, 'usage_bus_batches');
    let refused;
    const began = Date.now();
    try {
      refused = await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: own.key });
    } finally {
      release();
    }
    // The deadline, plus at most a quarter of it for the sweep.
    expect(Date.now() - began).toBeLessThan(1_500);
    expect(expectError(refused, 'entitlement_unavailable').message).toBe('Usage metering is temporarily unavailable, so the call was not served and not charged. Retry with backoff.');
    expect(refused.res.headers.get('retry-after')).toBe('1');

    const served = await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: own.key });
    expect(served.res.status, served.text).toBe(200);
    expect((await eventsOnBus(bus.db, { organizationId: own.organizationId })).map((e) => e.eventId)).toEqual([served.res.headers.get('x-request-id')]);
    expect(logged.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('then a dependency failing on every call is logged once per 10 s with its cause and no stack, and the calls held back are counted', async () => {
    const logged: { level: string; msg: string; code?: string; cause?: string; heldBack?: number; err?: unknown }[] = [];
    const logger = createLogger({ level: 'warn', write: (line) => logged.push(JSON.parse(line)) });
    const other = await startOther({ logger, usage: { publish: () => Promise.reject(meteringUnavailable(new Error('bus down'))), close: async () => {} } });
    const own = await createTestOrganization(other.db);
    for (let i = 0; i < 5; i++) expectError(await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: own.key }), 'entitlement_unavailable');
    // The cause once; each call's access line stays, at warn as every 5xx's is (what a 503 rate is counted from).
    const causes = logged.filter((l) => l.msg !== 'request');
    expect(causes).toEqual([expect.objectContaining({ level: 'warn', msg: 'request failed', code: 'entitlement_unavailable', cause: 'bus down' })]);
    expect(causes[0]).not.toHaveProperty('err');
    expect(causes[0]).not.toHaveProperty('heldBack');
    expect(logged.filter((l) => l.msg === 'request').map((l) => l.level)).toEqual(['warn', 'warn', 'warn', 'warn', 'warn']);
  });

  it('then a company store that cannot be reached is upstream_error (502)', async () => {
    const deadDb = createDb({ connectionString: viaPort(inject('databaseUrl'), await freePort()), poolMax: 1 });
    cleanups.push(() => deadDb.destroy());
    const other = await startOther({ store: createCompanyStore({ db: deadDb, queryTimeoutMs: 2_000, logger: silent }) });
    const own = await createTestOrganization(other.db);
    expectError(await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: own.key }), 'upstream_error');
    expect(await usageEventCount(other.db, own.organizationId)).toBe(0);
  });

  it('then a company store query blocked past its deadline is upstream_timeout (504)', async () => {
    const scratch = await migratedScratch('api_timeout');
    const other = await startOther({ store: createCompanyStore({ db: scratch.db, queryTimeoutMs: 150, logger: silent }) });
    const own = await createTestOrganization(other.db);

    const release = await holdTable(scratch.url, 'companies');
    try {
      expectError(await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: own.key }), 'upstream_timeout');
    } finally {
      release();
    }
    expect(await usageEventCount(other.db, own.organizationId)).toBe(0);
  });

  it('then with the key store gone, a cached key gets entitlement_unavailable (503) and an unseen key auth_unavailable (503)', async () => {
    const url = inject('databaseUrl');
    const proxy = await startTcpProxy({ host: new URL(url).hostname, port: Number(new URL(url).port || 5432) });
    cleanups.push(() => proxy.close());
    const direct = createDb({ connectionString: url, poolMax: 2 });
    cleanups.push(() => direct.destroy());
    const other = await startOther({
      databaseUrl: viaPort(url, proxy.port),
      entitlementCacheTtlMs: 50,
      store: createCompanyStore({ db: direct, queryTimeoutMs: 2_000, logger: silent }),
      usage: createPostgresUsageSink(direct, { logger: silent }),
    });
    const cached = await createTestOrganization(direct);
    const unseen = await createTestOrganization(direct);
    expect((await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: cached.key })).res.status).toBe(200);
    await proxy.cut();
    await new Promise((r) => setTimeout(r, 100));
    const entitlement = await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: cached.key });
    expectError(entitlement, 'entitlement_unavailable');
    const auth = await call(other.url, `/companies/${company.fiscalCode}/financials`, { key: unseen.key });
    expectError(auth, 'auth_unavailable');
    // Both say when to try again: the caches ask Postgres again a second after a failure.
    expect([entitlement.res.headers.get('retry-after'), auth.res.headers.get('retry-after')]).toEqual(['1', '1']);
    // The key could not be checked, so nothing was counted against a limit (the OpenAPI document says so).
    expect(auth.res.headers.get('ratelimit-limit')).toBeNull();
    expect(await usageEventCount(direct, cached.organizationId)).toBe(1);
  });
});

describe('when every error case has run', () => {
  it('then all 15 catalogue codes were produced', () => {
    expect([...seen].sort()).toEqual(Object.keys(errorCatalogue).sort());
  });

  it('then none of those failures published a usage event for the main organization', async () => {
    expect(await usageEventCount(api.db, org.organizationId)).toBe(0);
  });
});
