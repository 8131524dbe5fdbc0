import { Validator } from '@seriousme/openapi-schema-validator';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpointCatalogue } from '../core/companies/endpoint-catalogue.js';
import { errorCatalogue } from '../core/errors/index.js';
import {
  createTestOrganization, ensureExampleCompany, ensureLargeExampleCompany, exampleCompanyCode, largeExampleCompanyCode, startTestApi, type TestApi, type TestOrganization,
} from './api-fixtures.js';

// The per-key OpenAPI 3.1 document and the catalogue document behind /docs: valid for a
// third-party validator in both languages, limited to the organization's plan, priced as the
// organization is billed, with examples taken from real data that satisfy their own schemas.

type Json = Record<string, any>;
let api: TestApi;
let full: TestOrganization;
let financialsOnly: TestOrganization;

const fetchJson = async (path: string, headers: Record<string, string> = {}) => {
  const res = await fetch(`${api.url}${path}`, { headers });
  return { res, body: (await res.json()) as Json };
};
const bearer = (o: TestOrganization) => ({ Authorization: `Bearer ${o.key}` });

async function expectValidOpenApi(document: Json) {
  const validator = new Validator();
  const result = await validator.validate(structuredClone(document));
  expect(result.errors, JSON.stringify(result.errors)).toBeUndefined();
  expect(result.valid).toBe(true);
  expect(validator.version).toBe('3.1');
}

/** Everything but the prose: two languages must describe the same API. */
function shape(document: Json): Json {
  const strip = (value: any): any => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([k]) => !['description', 'summary', 'title', 'tags'].includes(k)).map(([k, v]) => [k, strip(v)]));
    }
    return value;
  };
  return strip(document);
}

beforeAll(async () => {
  api = await startTestApi();
  await ensureExampleCompany(api.db);
  await ensureLargeExampleCompany(api.db);
  full = await createTestOrganization(api.db);
  financialsOnly = await createTestOrganization(api.db, { endpoints: ['company-financials'] });
});
afterAll(async () => {
  await api?.close();
});

describe('when a key fetches /openapi.json', () => {
  it('then the document is valid OpenAPI 3.1.0, version 1.0.0, in English and in Italian', async () => {
    for (const headers of [{}, { 'Accept-Language': 'it-IT,it;q=0.9' }] as Record<string, string>[]) {
      const { res, body } = await fetchJson('/openapi.json', { ...bearer(full), ...headers });
      expect(res.status).toBe(200);
      expect(body.openapi).toBe('3.1.0');
      expect(body.info.version).toBe('1.0.0');
      await expectValidOpenApi(body);
    }
    const { body: it } = await fetchJson('/openapi.json?lang=it', bearer(full));
    await expectValidOpenApi(it);
  });

  it('then English is the default and ?lang=it or Accept-Language: it give Italian texts describing the same API', async () => {
    const en = (await fetchJson('/openapi.json', bearer(full))).body;
    const byQuery = (await fetchJson('/openapi.json?lang=it', bearer(full))).body;
    const byHeader = (await fetchJson('/openapi.json', { ...bearer(full), 'Accept-Language': 'it' })).body;
    expect(en.paths['/companies/{fiscalCode}/report'].get.summary).toBe('Company report');
    expect(byQuery.paths['/companies/{fiscalCode}/report'].get.summary).toBe('Report aziendale');
    expect(byHeader).toEqual(byQuery);
    expect(shape(byQuery)).toEqual(shape(en));
    // The tag's name is text too (/docs shows it as the group's heading): one tag, on every operation.
    for (const document of [en, byQuery]) {
      expect(document.tags).toHaveLength(1);
      for (const path of Object.values<any>(document.paths)) expect(path.get.tags).toEqual([document.tags[0].name]);
    }
    expect([en.tags[0].name, byQuery.tags[0].name]).toEqual(['Companies', 'Imprese']);
  });

  it('then it lists only the endpoints of the organization\'s plan', async () => {
    const { body: all } = await fetchJson('/openapi.json', bearer(full));
    expect(Object.keys(all.paths).sort()).toEqual(endpointCatalogue.map((e) => e.path).sort());
    const { body: one } = await fetchJson('/openapi.json', bearer(financialsOnly));
    expect(Object.keys(one.paths)).toEqual(['/companies/{taxId}/financials']);
    await expectValidOpenApi(one);
  });

  it('when the organization has no plan then 403 client_not_configured, counted against its rate limit', async () => {
    const unprovisioned = await createTestOrganization(api.db, { withPlan: false });
    const { res, body } = await fetchJson('/openapi.json', bearer(unprovisioned));
    expect(res.status).toBe(403);
    expect(body.error).toMatchObject({ code: 'client_not_configured', requestId: res.headers.get('X-Request-Id') });
    expect(res.headers.get('RateLimit-Remaining')).toMatch(/^\d+$/);
  });

  it('then each operation states the organization\'s usage measure, every error status and the bearer scheme', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    expect(body.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(body.security).toEqual([{ bearerAuth: [] }]);
    expect(body.components.schemas).toHaveProperty('ErrorEnvelope');
    expect(body.components.schemas).toHaveProperty('Meta');
    for (const endpoint of endpointCatalogue) {
      const op = body.paths[endpoint.path].get;
      expect(op['x-usage']).toEqual(endpoint.defaultMeasure);
      expect(op.description).toContain(`${endpoint.defaultMeasure.quantity} ${endpoint.defaultMeasure.unit === 'calls' ? 'call' : 'credits'}`);
      // A calls-priced endpoint cannot run out of credits, a credits-priced one cannot hit the calls cap.
      const excluded = endpoint.defaultMeasure.unit === 'calls' ? 'credits_exhausted' : 'limit_reached';
      for (const [code, { status }] of Object.entries(errorCatalogue)) {
        if (code === excluded) {
          expect(op.responses[String(status)]?.description ?? '').not.toContain(`\`${code}\``);
        } else {
          expect(op.responses[String(status)]?.description, `${endpoint.slug} ${code}`).toContain(`\`${code}\``);
          expect(op.responses[String(status)].content['application/json'].examples[code].value.error.code).toBe(code);
        }
      }
      expect(op.parameters[0]).toMatchObject({ name: endpoint.param.name, in: 'path', required: true });
      // The refusals that carry Retry-After say so: both 429s and the 503s.
      for (const status of ['429', '503']) expect(Object.keys(op.responses[status].headers), `${endpoint.slug} ${status}`).toContain('Retry-After');
      expect(Object.keys(op.responses['422'].headers)).not.toContain('Retry-After');
      // A 401 counted nothing: it carries no RateLimit-* (every other status may).
      expect(Object.keys(op.responses['401'].headers)).toEqual(['X-Request-Id']);
      expect(Object.keys(op.responses['422'].headers)).toContain('RateLimit-Limit');
    }
  });

  it('then the closed lists of decisions.md are enums in the response schemas', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    // Every property of that name, wherever it appears: a nullable enum is an anyOf with null.
    const found = new Map<string, unknown[]>();
    const walk = (value: any): void => {
      if (Array.isArray(value)) return value.forEach(walk);
      if (!value || typeof value !== 'object') return;
      for (const [name, schema] of Object.entries(value.properties ?? {}) as [string, any][]) {
        const item = name === 'categories' ? schema.items : schema;
        const values = item?.enum ?? item?.anyOf?.find((s: any) => s.enum)?.enum;
        found.set(name, [...(found.get(name) ?? []), values]);
      }
      Object.values(value).forEach(walk);
    };
    walk(body.components.schemas);
    const expected: Record<string, string[]> = {
      size: ['micro', 'small', 'medium', 'large'],
      legalForm: ['SRL', 'SRLS', 'SPA', 'SAPA', 'SNC', 'SAS', 'SS', 'SC', 'DI', 'CONSORZIO', 'FONDAZIONE', 'ASSOCIAZIONE', 'ALTRO'],
      naceSection: 'ABCDEFGHIJKLMNOPQRSTU'.split(''),
      roleCategory: ['legal_representative', 'director', 'board_member', 'statutory_auditor', 'auditor', 'manager', 'proxy', 'liquidator', 'other'],
      categories: ['balance_sheet', 'income_statement', 'assets', 'liabilities', 'equity', 'revenue', 'costs', 'profitability', 'liquidity', 'solvency', 'efficiency', 'ratio'],
    };
    for (const [name, values] of Object.entries(expected)) {
      expect(found.get(name)?.length, name).toBeGreaterThan(0);
      for (const listed of found.get(name)!) expect(listed, name).toEqual(values);
    }
  });

  it('then the examples come from real companies and satisfy the response schemas, the profile\'s one per branch', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    const ajv = new Ajv2020.default({ strict: false });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'https://api.test/openapi.json', components: body.components });
    for (const endpoint of endpointCatalogue) {
      const op = body.paths[endpoint.path].get;
      const content = op.responses['200'].content['application/json'];
      const validate = ajv.compile({ $ref: `https://api.test/openapi.json${content.schema.$ref}` });
      // The profile answers in two shapes: a named example of each, with its own company.
      const examples: [string, Json][] = endpoint.slug === 'company-profile'
        ? Object.entries(content.examples).map(([name, example]: [string, any]) => [op.parameters[0].examples[name].value, example.value])
        : [[op.parameters[0].example, content.example]];
      for (const [code, example] of examples) {
        expect(example.meta.endpoint).toBe(endpoint.slug);
        expect(validate(example), `${endpoint.slug} ${code} ${JSON.stringify(validate.errors)}`).toBe(true);
      }
      expect(examples.map(([code]) => code)).toContain(exampleCompanyCode);
    }
    expect(body.paths['/companies/{fiscalCode}/report'].get.responses['200'].content['application/json'].example.data.identity.legalName).toBe('Esempio Dati S.R.L.');
    const profile = body.paths['/companies/{taxId}/profile'].get;
    const { smallCompany, largeCompany } = profile.responses['200'].content['application/json'].examples;
    expect(profile.parameters[0].examples.smallCompany.value).toBe(exampleCompanyCode);
    expect(smallCompany.value.data).toHaveProperty('risk');
    expect(profile.parameters[0].examples.largeCompany.value).toBe(largeExampleCompanyCode);
    expect(largeCompany.value.data.identity.legalName).toBe('Esempio Energia S.P.A.');
    // Other test files load sample companies into the same database (division 35 included), so
    // the peers are checked for what they must be, not for which they are.
    const peers = largeCompany.value.data.peers as Json[];
    expect(peers.length).toBeGreaterThanOrEqual(1);
    expect(peers.length).toBeLessThanOrEqual(10);
    for (const peer of peers) expect(peer.identity.naceCode).toMatch(/^35\./);
    expect(largeCompany.value.data.peerCount).toBeGreaterThanOrEqual(Math.max(2, peers.length));
  });

  it('then every component schema and every property has a description, in English and in Italian, saying the same thing', async () => {
    const documents = { en: (await fetchJson('/openapi.json', bearer(full))).body, it: (await fetchJson('/openapi.json?lang=it', bearer(full))).body };
    // [where, description] of each component schema and of each property at any depth (inside
    // array items and anyOf branches too), in document order: the two languages have the same
    // structure (see above), so the lists pair up.
    const described = (schemas: Json) => {
      const found: [string, unknown][] = [];
      const walk = (value: any, where: string): void => {
        if (Array.isArray(value)) return value.forEach((v) => walk(v, where));
        if (!value || typeof value !== 'object') return;
        for (const [key, v] of Object.entries(value)) {
          if (key === 'properties') {
            for (const [name, property] of Object.entries(v as Json)) {
              found.push([`${where}.${name}`, property.description]);
              walk(property, `${where}.${name}`);
            }
          } else if (key === 'items' && v && typeof v === 'object' && !('$ref' in v)) {
            // An array's items written out in place (not a component, which has its own).
            found.push([`${where}[]`, (v as Json).description]);
            walk(v, `${where}[]`);
          } else walk(v, where);
        }
      };
      for (const [id, schema] of Object.entries(schemas)) {
        found.push([id, schema.description]);
        walk(schema, id);
      }
      return found;
    };
    const en = described(documents.en.components.schemas);
    const it = described(documents.it.components.schemas);
    expect(Object.keys(documents.en.components.schemas).length).toBeGreaterThanOrEqual(23);
    expect(en.length).toBeGreaterThan(150);
    expect(it.map(([where]) => where)).toEqual(en.map(([where]) => where));
    for (const [i, [where, text]] of en.entries()) {
      expect(typeof text === 'string' && text.length > 0, `English ${where}`).toBe(true);
      expect(typeof it[i]![1] === 'string' && (it[i]![1] as string).length > 0, `Italian ${where}`).toBe(true);
      // An English sentence left in the Italian document has no translation (italian-descriptions.ts).
      expect(it[i]![1], `Italian ${where} is still English`).not.toBe(text);
    }
    // The meanings the spec's tables and decisions.md give, in both languages.
    const text = (lang: 'en' | 'it', where: string) => (lang === 'en' ? en : it).find(([w]) => w === where)![1];
    expect(text('en', 'Registry.pec')).toContain('Certified e-mail');
    expect(text('it', 'Registry.pec')).toContain('posta elettronica certificata');
    expect(text('en', 'Holder.share')).toContain('from 0 to 1');
    expect(text('it', 'Holder.share')).toContain('da 0 a 1');
    expect(text('en', 'StateAids.amount')).toContain('euro');
    expect(text('it', 'StateAids.amount')).toContain('euro');
    expect(text('en', 'CompanyReportData.identity.activityStartDate')).toContain('YYYY-MM-DD');
    expect(text('it', 'CompanyReportData.identity.activityStartDate')).toContain('YYYY-MM-DD');
    // Its shape is checked as every other date's is, not only described.
    const identity = documents.en.components.schemas.CompanyReportData.properties.identity.properties;
    const patternOf = (schema: unknown) => /"pattern":("[^"]*")/.exec(JSON.stringify(schema))?.[1];
    expect(patternOf(identity.activityStartDate)).toBe(patternOf(identity.incorporationDate));
    expect(patternOf(identity.activityStartDate)).toBeDefined();
    expect(text('en', 'CompanyProfileData.peerCount')).toMatch(/same NACE division.*at most 10/);
    expect(text('it', 'CompanyProfileData.peerCount')).toMatch(/stessa divisione NACE.*al massimo 10/);
  });

  it('then an operation priced at 0 credits for the organization does not document 402 credits_exhausted, which never refuses it', async () => {
    const freeProfile = await createTestOrganization(api.db);
    await api.db('plan_entitlements').where({ plan_id: freeProfile.planId, product: 'company-profile' }).update({ quantity: 0 });
    await api.db('allowances').where({ organization_id: freeProfile.organizationId }).update({ credits_balance: 0, credits_exhausted: true });
    const { body } = await fetchJson('/openapi.json', bearer(freeProfile));
    const profile = body.paths['/companies/{taxId}/profile'].get;
    expect(profile['x-usage']).toEqual({ quantity: 0, unit: 'credits' });
    expect(profile.responses).not.toHaveProperty('402');
    expect(body.paths['/companies/{taxId}/financials'].get.responses['402'].description).toContain('`credits_exhausted`');
    // What the documents say is what the API does with the balance exhausted.
    expect((await fetchJson(`/companies/${exampleCompanyCode}/profile`, bearer(freeProfile))).res.status).toBe(200);
    const financials = await fetchJson(`/companies/${exampleCompanyCode}/financials`, bearer(freeProfile));
    expect([financials.res.status, financials.body.error?.code]).toEqual([402, 'credits_exhausted']);
  });

  it('then without a key it is refused with missing_api_key', async () => {
    const { res, body } = await fetchJson('/openapi.json');
    expect(res.status).toBe(401);
    expect(body.error.code).toBe('missing_api_key');
  });

  it('then it carries the RateLimit headers and counts against the organization\'s limit like any authenticated request (429 past it)', async () => {
    const limited = await createTestOrganization(api.db, { ratePerSecond: 1, burst: 2, ratePerMinute: 100 });
    const first = await fetchJson('/openapi.json', bearer(limited));
    expect(first.res.status).toBe(200);
    expect(first.res.headers.get('ratelimit-limit')).toBe('2');
    expect(first.res.headers.get('ratelimit-remaining')).toBe('1');
    expect(Number(first.res.headers.get('ratelimit-reset'))).toBeGreaterThanOrEqual(0);
    await fetchJson('/openapi.json', bearer(limited));
    const third = await fetchJson('/openapi.json', bearer(limited));
    expect(third.res.status).toBe(429);
    expect(third.body.error.code).toBe('rate_limited');
    expect(Number(third.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  });

  it('then ?lang=IT and ?lang=it-IT are Italian too (the parameter is a case-insensitive language tag)', async () => {
    const it = await fetchJson('/openapi.json?lang=it', bearer(full));
    const upper = await fetchJson('/openapi.json?lang=IT', bearer(full));
    expect(upper.res.headers.get('content-language')).toBe('it');
    expect(upper.body.info.description).toBe(it.body.info.description);
    // A language tag with its region, as Accept-Language takes it.
    for (const tag of ['it-IT', 'it_CH']) {
      const tagged = await fetchJson(`/openapi.json?lang=${tag}`, bearer(full));
      expect(tagged.res.headers.get('content-language'), tag).toBe('it');
      expect(tagged.body.info.description).toBe(it.body.info.description);
    }
    expect((await fetchJson('/openapi.json?lang=en-GB', bearer(full))).res.headers.get('content-language')).toBe('en');
  });
});

describe('when anyone fetches the catalogue document of /docs', () => {
  it('then it lists all four endpoints at their default measures, valid in both languages', async () => {
    for (const lang of ['en', 'it']) {
      const { res, body } = await fetchJson(`/docs/openapi.json?lang=${lang}`);
      expect(res.status).toBe(200);
      expect(Object.keys(body.paths)).toHaveLength(4);
      await expectValidOpenApi(body);
    }
  });
});
