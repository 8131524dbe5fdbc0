import { eventsOnBus } from './support/usage-bus.js';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointCatalogue, successEnvelopeSchema } from '../core/companies/endpoint-catalogue.js';
import { COMPANY_YEARS, FISCAL_YEARS, MAX_COUNT } from '../core/companies/schemas/index.js';
import { setProductOverride } from '../core/billing/index.js';
import {
  createTestOrganization, ensureExampleCompany, insertCompanies, makeDossier, randomPersonalCode, startTestApi,
  type TestApi, type TestOrganization,
} from './api-fixtures.js';

// The four endpoints through a real server and real Postgres, each response validated against
// the OpenAPI document the same server serves to the same key.

let api: TestApi;
let org: TestOrganization;
const small = makeDossier();
const large = makeDossier({ fiscalCode: randomPersonalCode(), years: [{ year: 2024, size: 'large', employees: 900, metrics: [{ slug: 'revenue', value: 90_000_000 }, { slug: 'total_assets', value: 80_000_000 }] }] });
// Every year and count at the edge of what the import takes: the document's ranges (the
// response schemas') must hold whatever the import stored.
const atBounds = makeDossier({
  foundingYear: COMPANY_YEARS.min,
  dissolutionYear: COMPANY_YEARS.max,
  headcount: { employees: MAX_COUNT, asOf: '2099-12-31' },
  stateAids: { count: MAX_COUNT, countLast36Months: 0, amount: 1e15, amountLast36Months: 1e15 },
  years: [
    { year: FISCAL_YEARS.min, employees: 0 },
    { year: FISCAL_YEARS.max, employees: MAX_COUNT, metrics: [{ slug: 'revenue', value: 1e15 }, { slug: 'net_income', value: -1e15 }] },
  ],
});
const peer = makeDossier({ years: [{ year: 2024, size: 'large', employees: 700, metrics: [{ slug: 'revenue', value: 70_000_000 }, { slug: 'total_assets', value: 60_000_000 }] }] });

type Json = Record<string, any>;
const get = async (path: string, key?: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${api.url}${path}`, { headers: { ...(key ? { Authorization: `Bearer ${key}` } : {}), ...headers } });
  return { res, body: (await res.json()) as Json };
};

function responseValidator(document: Json, path: string) {
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema({ $id: 'https://api.test/openapi.json', components: document.components }, 'doc');
  const ref = document.paths[path].get.responses['200'].content['application/json'].schema.$ref as string;
  return ajv.compile({ $ref: `https://api.test/openapi.json${ref}` });
}

beforeAll(async () => {
  api = await startTestApi();
  await ensureExampleCompany(api.db);
  await insertCompanies(api.db, [small, large, peer, atBounds]);
  org = await createTestOrganization(api.db);
});
afterAll(async () => {
  await api?.close();
});

describe('when an entitled key calls each endpoint', () => {
  for (const endpoint of endpointCatalogue) {
    it(`then ${endpoint.slug} answers 200 with data matching the served OpenAPI schema, in lower and upper case`, async () => {
      const { body: document } = await get('/openapi.json', org.key);
      const validate = responseValidator(document, endpoint.path);
      for (const company of [small, large, atBounds]) {
        for (const code of [company.fiscalCode.toLowerCase(), company.fiscalCode.toUpperCase()]) {
          const { res, body } = await get(endpoint.path.replace(/\{\w+\}/, code), org.key);
          expect(res.status, JSON.stringify(body)).toBe(200);
          expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
          // The document publishes answers open (clients must ignore new fields); the server
          // holds itself to its strict zod schemas: no field it does not document.
          const strict = successEnvelopeSchema(endpoint.data).safeParse(body);
          expect(strict.success, JSON.stringify(strict.error?.issues)).toBe(true);
          expect(body.meta.endpoint).toBe(endpoint.slug);
          expect(body.meta.usage).toEqual(endpoint.defaultMeasure);
          expect(body.meta.requestId).toMatch(/^req_[0-9a-f-]{36}$/);
          expect(res.headers.get('x-request-id')).toBe(body.meta.requestId);
          for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) expect(res.headers.get(h)).toMatch(/^\d+$/);
        }
      }
    });
  }

  it('then a code whose letters only upper-case to the company\'s (the dotless ı, the long ſ) finds no company', async () => {
    const code = 'MSSLNI80A01H501I';
    await insertCompanies(api.db, [makeDossier({ fiscalCode: code })]);
    expect((await get(`/companies/${code.toLowerCase()}/profile`, org.key)).res.status).toBe(200);
    for (const lookalike of ['mssln\u013180a01h501\u0131', 'm\u017f\u017flni80a01h501i']) {
      for (const path of [`/companies/${encodeURIComponent(lookalike)}/profile`, `/companies/${encodeURIComponent(lookalike)}/financials`]) {
        const { res, body } = await get(path, org.key);
        expect(res.status, path).toBe(404);
        expect(body.error.code).toBe('not_found');
      }
    }
  });

  it('then the profile takes the peers branch for a large company and the risk branch otherwise', async () => {
    const { body: largeBody } = await get(`/companies/${large.fiscalCode}/profile`, org.key);
    expect(largeBody.data).toHaveProperty('peers');
    expect(largeBody.data).not.toHaveProperty('risk');
    const { body: smallBody } = await get(`/companies/${small.fiscalCode}/profile`, org.key);
    expect(smallBody.data).toHaveProperty('risk');
    expect(smallBody.data).not.toHaveProperty('peers');
  });
});

describe('when calls succeed and fail', () => {
  it('then exactly the 2xx calls publish a usage event, keyed by their request id', async () => {
    const own = await createTestOrganization(api.db);
    const ok1 = await get(`/companies/${small.fiscalCode}/financials`, own.key);
    const ok2 = await get(`/companies/${small.fiscalCode.toLowerCase()}/report`, own.key);
    const notFound = await get('/companies/00000000001/credit-report', own.key);
    const invalid = await get('/companies/abc/report', own.key);
    expect([ok1.res.status, ok2.res.status, notFound.res.status, invalid.res.status]).toEqual([200, 200, 404, 422]);

    const events = await eventsOnBus(api.db, { organizationId: own.organizationId });
    expect(events.map((e) => e.eventId)).toEqual([ok1.body.meta.requestId, ok2.body.meta.requestId]);
    expect(events[0]).toMatchObject({
      v: 1, eventId: ok1.body.meta.requestId, organizationId: own.organizationId, keyId: own.keyId, source: 'api',
      product: 'company-financials', quantity: 5, unit: 'credits',
    });
    expect(events[1]).toMatchObject({ product: 'company-report', quantity: 1, unit: 'calls' });
  });

  it('then an organization override changes meta.usage, the usage event and the OpenAPI x-usage alike', async () => {
    const own = await createTestOrganization(api.db);
    await setProductOverride(api.db, own.organizationId, 'company-financials', { quantity: 3, unit: 'credits' });
    await expect.poll(async () => (await get(`/companies/${small.fiscalCode}/financials`, own.key)).body.meta?.usage, { timeout: 5_000 }).toEqual({ quantity: 3, unit: 'credits' });
    const { body: document } = await get('/openapi.json', own.key);
    expect(document.paths['/companies/{taxId}/financials'].get['x-usage']).toEqual({ quantity: 3, unit: 'credits' });
    const events = await eventsOnBus(api.db, { organizationId: own.organizationId });
    expect(events.at(-1)).toMatchObject({ quantity: 3, unit: 'credits' });
  });
});

describe('when the service is probed', () => {
  it('then /healthz answers ok without a key', async () => {
    const { res, body } = await get('/healthz');
    expect(res.status).toBe(200);
    expect(body).toEqual({ status: 'ok', rateLimitStore: 'in-process' });
  });
});
