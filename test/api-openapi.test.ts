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

/** Everything but the prose: two languages must describe the same API, tag names included. */
function shape(document: Json): Json {
  const strip = (value: any): any => {
    if (Array.isArray(value)) return value.map(strip);
    if (value && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).filter(([k]) => !['description', 'summary', 'title', 'x-displayName'].includes(k)).map(([k, v]) => [k, strip(v)]));
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
    // One tag, on every operation. Generated clients name classes and folders by its name, so the
    // name is the same in both languages; the heading readers see (x-displayName) and the
    // description are in the document's.
    for (const document of [en, byQuery]) {
      expect(document.tags).toHaveLength(1);
      for (const path of Object.values<any>(document.paths)) expect(path.get.tags).toEqual([document.tags[0].name]);
    }
    expect([en.tags[0].name, byQuery.tags[0].name]).toEqual(['Companies', 'Companies']);
    expect([en.tags[0]['x-displayName'], byQuery.tags[0]['x-displayName']]).toEqual(['Companies', 'Imprese']);
    expect(byQuery.tags[0].description).toContain('impresa italiana');
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
    // bearerFormat is the keys' shape: the key this document was fetched with has it.
    expect(full.key).toMatch(new RegExp(`^${body.components.securitySchemes.bearerAuth.bearerFormat}$`));
    expect(body.security).toEqual([{ bearerAuth: [] }]);
    expect(body.components.schemas).toHaveProperty('ErrorEnvelope');
    expect(body.components.schemas).toHaveProperty('Meta');
    for (const endpoint of endpointCatalogue) {
      const op = body.paths[endpoint.path].get;
      expect(op['x-usage']).toEqual(endpoint.defaultMeasure);
      expect(op.description).toContain(`${endpoint.defaultMeasure.quantity} ${endpoint.defaultMeasure.unit === 'calls' ? 'call' : 'credits'}`);
      // Said as a sentence, not "1 call per successful call".
      expect(op.description).toContain(`Each successful call is billed to your organization as ${endpoint.defaultMeasure.quantity} `);
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
      // A 401 counted nothing: it carries no RateLimit-* (every other status may), and names the scheme.
      expect(Object.keys(op.responses['401'].headers)).toEqual(['X-Request-Id', 'WWW-Authenticate']);
      expect(Object.keys(op.responses['422'].headers)).toContain('RateLimit-Limit');
    }
  });

  it('then each closed list of decisions.md is one enum component, which every field holding it refers to', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    const schemas = body.components.schemas;
    const expected: Record<string, { component: string; values: string[]; atLeast: number }> = {
      size: { component: 'CompanySize', values: ['micro', 'small', 'medium', 'large'], atLeast: 2 },
      legalForm: { component: 'LegalForm', values: ['SRL', 'SRLS', 'SPA', 'SAPA', 'SNC', 'SAS', 'SS', 'SC', 'DI', 'CONSORZIO', 'FONDAZIONE', 'ASSOCIAZIONE', 'ALTRO'], atLeast: 3 },
      naceSection: { component: 'NaceSection', values: 'ABCDEFGHIJKLMNOPQRSTU'.split(''), atLeast: 3 },
      roleCategory: { component: 'RoleCategory', values: ['legal_representative', 'director', 'board_member', 'statutory_auditor', 'auditor', 'manager', 'proxy', 'liquidator', 'other'], atLeast: 1 },
      categories: { component: 'MetricCategory', values: ['balance_sheet', 'income_statement', 'assets', 'liabilities', 'equity', 'revenue', 'costs', 'profitability', 'liquidity', 'solvency', 'efficiency', 'ratio'], atLeast: 1 },
    };
    for (const { component, values } of Object.values(expected)) expect(schemas[component], component).toMatchObject({ type: 'string', enum: values });
    // Every property of those names, at any depth: a $ref to the component, nullable (an anyOf
    // with null) or, for categories, as the array's items. And no list written out elsewhere.
    const refs = new Map<string, unknown[]>();
    const inlineEnums: unknown[] = [];
    const walk = (value: any): void => {
      if (Array.isArray(value)) return value.forEach(walk);
      if (!value || typeof value !== 'object') return;
      if (Array.isArray(value.enum)) inlineEnums.push(value.enum);
      for (const [name, schema] of Object.entries(value.properties ?? {}) as [string, any][]) {
        if (!(name in expected)) continue;
        const item = name === 'categories' ? schema.items : schema;
        refs.set(name, [...(refs.get(name) ?? []), item?.$ref ?? item?.anyOf?.find((s: any) => s.$ref)?.$ref]);
      }
      Object.values(value).forEach(walk);
    };
    const listComponents = new Set(Object.values(expected).map((e) => e.component));
    for (const [id, schema] of Object.entries<any>(schemas)) if (!listComponents.has(id)) walk(schema);
    for (const [name, { component, atLeast }] of Object.entries(expected)) {
      expect(refs.get(name)?.length ?? 0, name).toBeGreaterThanOrEqual(atLeast);
      for (const ref of refs.get(name)!) expect(ref, name).toBe(`#/components/schemas/${component}`);
    }
    for (const values of inlineEnums) expect(Object.values(expected).map((e) => e.values)).not.toContainEqual(values);
  });

  it('then the components are named for resources, one stem per endpoint, never as a client generator names an operation\'s own types', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    const schemas = body.components.schemas;
    const operations = Object.values<any>(body.paths).map((path) => path.get);
    expect(operations.map((op) => op.operationId).sort()).toEqual(['companyCreditReport', 'companyFinancials', 'companyProfile', 'companyReport']);
    // hey-api, orval, openapi-typescript-codegen … name an operation's types <operationId>Data,
    // …Response(s), …Error(s), in either case: a component of such a name is renamed or clashes.
    const generated = new Set(operations.flatMap((op) => ['Data', 'Response', 'Responses', 'Error', 'Errors'].map((suffix) => `${op.operationId}${suffix}`.toLowerCase())));
    expect(Object.keys(schemas).filter((name) => generated.has(name.toLowerCase()))).toEqual([]);
    for (const op of operations) {
      const resource = `${op.operationId[0].toUpperCase()}${op.operationId.slice(1)}`;
      expect(op.responses['200'].content['application/json'].schema.$ref).toBe(`#/components/schemas/${resource}Envelope`);
      expect(schemas[`${resource}Envelope`].properties.data.$ref).toBe(`#/components/schemas/${resource}`);
    }
    // The reports' identities are named, each with every field of CompanyIdentity written out
    // (not an allOf with it: a generator would name the merged type by position).
    for (const [report, identity, added] of [
      ['CompanyReport', 'CompanyReportIdentity', ['activityStartDate', 'dissolutionYear', 'foreignOwned', 'controllingEntity']],
      ['CompanyCreditReport', 'CompanyCreditReportIdentity', ['foreignOwned', 'controllingEntity']],
    ] as const) {
      expect(schemas[report].properties.identity.$ref).toBe(`#/components/schemas/${identity}`);
      expect(schemas[identity]).toMatchObject({ type: 'object' });
      expect(schemas[identity].allOf).toBeUndefined();
      expect(schemas[identity].required).toEqual([...Object.keys(schemas.CompanyIdentity.properties), ...added]);
    }
  });

  it('then the profile is one of two named branches that no answer can match both of, and no object is left unnamed in a union', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    const schemas = body.components.schemas;
    expect(schemas.CompanyProfile.oneOf).toEqual([{ $ref: '#/components/schemas/LargeCompanyProfile' }, { $ref: '#/components/schemas/SmallCompanyProfile' }]);
    expect(schemas.CompanyProfile).not.toHaveProperty('anyOf');
    const { LargeCompanyProfile: large, SmallCompanyProfile: small } = schemas;
    // Open (answers may gain fields), so each requires a field the other lacks: that is what
    // keeps an answer to exactly one branch (checked on real answers below).
    for (const [branch, other] of [[large, small], [small, large]]) {
      expect(branch).not.toHaveProperty('additionalProperties');
      expect(branch.required.filter((field: string) => !(field in other.properties)).length).toBeGreaterThan(0);
    }
    expect(large.required).toEqual(expect.arrayContaining(['peerCount', 'peers']));
    expect(large.properties.peers.items).toEqual({ $ref: '#/components/schemas/CompanyPeer' });
    expect(small.required).toContain('risk');
    expect(small.properties.risk.$ref).toBe('#/components/schemas/CompanyProfileRisk');
    // A generator names an object written out in an anyOf/oneOf by its position (AnyOf, AnyOfFive):
    // renamed whenever a field is added. Every union member is a $ref or a bare type.
    const unnamed: string[] = [];
    const walk = (value: any, where: string): void => {
      if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${where}[${i}]`));
      if (!value || typeof value !== 'object') return;
      for (const keyword of ['anyOf', 'oneOf']) {
        for (const member of value[keyword] ?? []) if (member.type === 'object' || member.properties) unnamed.push(`${where}.${keyword}`);
      }
      for (const [key, v] of Object.entries(value)) walk(v, `${where}.${key}`);
    };
    walk(schemas, 'schemas');
    expect(unnamed).toEqual([]);
  });

  it('then every whole date is format: date beside its YYYY-MM-DD pattern, and nothing else is', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    const datePattern = '^\\d{4}-\\d{2}-\\d{2}$';
    const dates: string[] = [];
    const walk = (value: any, where: string): void => {
      if (Array.isArray(value)) return value.forEach((v) => walk(v, where));
      if (!value || typeof value !== 'object') return;
      if (value.pattern === datePattern || value.format === 'date') {
        expect(value, where).toMatchObject({ type: 'string', pattern: datePattern, format: 'date' });
        dates.push(where);
      }
      for (const [key, v] of Object.entries(value)) {
        if (key === 'properties') for (const [name, property] of Object.entries(v as Json)) walk(property, name);
        else walk(v, where);
      }
    };
    walk(body.components.schemas, '');
    // The fields of the spec that hold a date, wherever they appear (the identities, the years).
    expect([...new Set(dates)].sort()).toEqual(['activityStartDate', 'asOf', 'incorporationDate', 'statementDate']);
    expect(dates.length).toBeGreaterThanOrEqual(6);
  });

  it('then every number states the range the data has: years from the first the import takes, counts from 0 to what the store\'s integer holds, amounts of aid from 0, and no integer zod\'s ±2^53', async () => {
    const { body } = await fetchJson('/openapi.json', bearer(full));
    // Field name → the ranges it is given wherever it appears (identities, years, peers, envelopes).
    const ranges = new Map<string, Set<string>>();
    const walk = (value: any, field: string): void => {
      if (Array.isArray(value)) return value.forEach((v) => walk(v, field));
      if (!value || typeof value !== 'object') return;
      const types = [value.type].flat();
      const numeric = types.find((t) => t === 'integer' || t === 'number');
      if (numeric) ranges.set(field, (ranges.get(field) ?? new Set()).add(`${numeric} ${value.minimum ?? '-'}..${value.maximum ?? '-'}`));
      for (const [key, v] of Object.entries(value)) {
        if (key === 'properties') for (const [name, property] of Object.entries(v as Json)) walk(property, name);
        else walk(v, field);
      }
    };
    walk(body.components.schemas, '');
    const count = 'integer 0..2147483647';
    expect(Object.fromEntries([...ranges].map(([field, seen]) => [field, [...seen]]))).toEqual({
      foundingYear: ['integer 1800..2100'],
      dissolutionYear: ['integer 1800..2100'],
      year: ['integer 1900..2100'],
      latestFiledYear: ['integer 1900..2100'],
      employees: [count],
      count: [count],
      countLast36Months: [count],
      peerCount: [count],
      amount: ['number 0..-'],
      amountLast36Months: ['number 0..-'],
      share: ['number 0..1'],
      // Money, changes and scores can be negative: no range.
      value: ['number -..-'],
      previousValue: ['number -..-'],
      yoyChange: ['number -..-'],
      marketValue: ['number -..-'],
      score: ['number -..-'],
      employeesYoY: ['number -..-'],
      // A usage measure is a bigint column, read as a JavaScript number.
      quantity: ['integer 0..9007199254740991'],
    });
  });

  it('then the headers are declared as sent: X-Request-Id as meta.requestId, and on every 401 the WWW-Authenticate the server sends', async () => {
    const { res, body } = await fetchJson('/openapi.json', bearer(full));
    const { headers, schemas } = body.components;
    const { description: _meta, ...requestId } = schemas.Meta.properties.requestId;
    const { description: _error, ...errorRequestId } = schemas.Error.properties.requestId;
    expect(headers['X-Request-Id'].schema).toEqual(requestId);
    expect(headers['X-Request-Id'].schema).toEqual(errorRequestId);
    expect(res.headers.get('x-request-id')).toMatch(new RegExp(headers['X-Request-Id'].schema.pattern));
    // The 401s as the API answers them: no key, and a key-shaped one it does not know.
    const sent = new Set<string | null>();
    for (const auth of [{}, { Authorization: `Bearer sk_live_${'0'.repeat(32)}` }] as Record<string, string>[]) {
      for (const path of ['/openapi.json', `/companies/${exampleCompanyCode}/report`]) {
        const refused = await fetchJson(path, auth);
        expect(refused.res.status, path).toBe(401);
        sent.add(refused.res.headers.get('www-authenticate'));
      }
    }
    expect(headers['WWW-Authenticate']).toMatchObject({ required: true, schema: { type: 'string' } });
    expect([...sent].sort()).toEqual([...headers['WWW-Authenticate'].schema.enum].sort());
    for (const endpoint of endpointCatalogue) {
      expect(body.paths[endpoint.path].get.responses['401'].headers['WWW-Authenticate']).toEqual({ $ref: '#/components/headers/WWW-Authenticate' });
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
    expect(text('en', 'CompanyReportIdentity.activityStartDate')).toContain('YYYY-MM-DD');
    expect(text('it', 'CompanyReportIdentity.activityStartDate')).toContain('YYYY-MM-DD');
    // Its shape is checked as every other date's is, not only described.
    const identity = documents.en.components.schemas.CompanyReportIdentity.properties;
    const patternOf = (schema: unknown) => /"pattern":("[^"]*")/.exec(JSON.stringify(schema))?.[1];
    expect(patternOf(identity.activityStartDate)).toBe(patternOf(identity.incorporationDate));
    expect(patternOf(identity.activityStartDate)).toBeDefined();
    expect(text('en', 'LargeCompanyProfile.peerCount')).toMatch(/same NACE division.*at most 10/);
    expect(text('it', 'LargeCompanyProfile.peerCount')).toMatch(/stessa divisione NACE.*al massimo 10/);
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

describe('when a client generated from /openapi.json reads real answers', () => {
  /** A validator for one schema of the served document (a $ref into it). */
  const validatorFor = (document: Json) => {
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'https://api.test/openapi.json', components: document.components });
    return (schema: Json) => ajv.compile(schema.$ref ? { $ref: `https://api.test/openapi.json${schema.$ref}` } : { $id: `https://api.test/inline/${Math.random()}`, ...JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"https://api.test/openapi.json#/components/')) });
  };

  it('then an answer with a field added still validates (answers are published open), and the profile\'s real large and small answers each match exactly one branch', async () => {
    const { body: document } = await fetchJson('/openapi.json', bearer(full));
    const walkClosed: string[] = [];
    const walk = (value: any, where: string): void => {
      if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${where}[${i}]`));
      if (!value || typeof value !== 'object') return;
      if (value.additionalProperties === false) walkClosed.push(where);
      for (const [key, v] of Object.entries(value)) walk(v, `${where}.${key}`);
    };
    walk(document.components.schemas, 'schemas');
    walk(document.paths, 'paths');
    expect(walkClosed).toEqual([]);
    const compile = validatorFor(document);
    for (const endpoint of endpointCatalogue) {
      const { res, body } = await fetchJson(endpoint.path.replace(/\{\w+\}/, exampleCompanyCode), bearer(full));
      expect(res.status).toBe(200);
      const validate = compile(document.paths[endpoint.path].get.responses['200'].content['application/json'].schema);
      const grown = structuredClone(body);
      grown.addedLater = true;
      grown.meta.addedLater = 1;
      grown.data.addedLater = 'x';
      grown.data.identity.addedLater = null;
      expect(validate(grown), `${endpoint.slug} ${JSON.stringify(validate.errors)}`).toBe(true);
    }
    const large = compile({ $ref: '#/components/schemas/LargeCompanyProfile' });
    const small = compile({ $ref: '#/components/schemas/SmallCompanyProfile' });
    const profile = compile({ $ref: '#/components/schemas/CompanyProfile' });
    const answers = {
      large: (await fetchJson(`/companies/${largeExampleCompanyCode}/profile`, bearer(full))).body.data,
      small: (await fetchJson(`/companies/${exampleCompanyCode}/profile`, bearer(full))).body.data,
    };
    expect(answers.large).toHaveProperty('peers');
    expect(answers.small).toHaveProperty('risk');
    expect([large(answers.large), small(answers.large), profile(answers.large)]).toEqual([true, false, true]);
    expect([large(answers.small), small(answers.small), profile(answers.small)]).toEqual([false, true, true]);
  });

  it('then each error status\'s error.code is exactly the codes that status carries for that operation, in one shared ErrorEnvelope', async () => {
    const { body: document } = await fetchJson('/openapi.json', bearer(full));
    for (const endpoint of endpointCatalogue) {
      const op = document.paths[endpoint.path].get;
      const excluded = endpoint.defaultMeasure.unit === 'calls' ? 'credits_exhausted' : 'limit_reached';
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (status === '200') continue;
        const schema = response.content['application/json'].schema;
        expect(schema.allOf[0], `${endpoint.slug} ${status}`).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
        const expected = Object.entries(errorCatalogue).filter(([code, c]) => String(c.status) === status && code !== excluded).map(([code]) => code);
        // error pinned as an allOf of the Error component too (a bare object beside it read as
        // the whole error to a linter checking examples against closed objects).
        const error = schema.allOf[1].properties.error;
        expect(error.allOf[0], `${endpoint.slug} ${status}`).toEqual({ $ref: '#/components/schemas/Error' });
        expect(error.allOf[1].properties.code.enum, `${endpoint.slug} ${status}`).toEqual(expected);
        // A 422 always says what failed: its details are required there, and only there.
        expect(error.allOf[1].required, `${endpoint.slug} ${status}`).toEqual(status === '422' ? ['code', 'details'] : ['code']);
        // Every example of the status is one of its codes and satisfies its schema.
        const validate = validatorFor(document)(schema);
        for (const example of Object.values<any>(response.content['application/json'].examples)) {
          expect(validate(example.value), `${endpoint.slug} ${status} ${JSON.stringify(validate.errors)}`).toBe(true);
        }
      }
      expect(op.responses['401'].content['application/json'].schema.allOf[1].properties.error.allOf[1].properties.code.enum).toEqual(['missing_api_key', 'invalid_api_key']);
    }
    // A real 401 fits its own status's schema; the same body answered as a 404 would not.
    const refused = await fetchJson(`/companies/${exampleCompanyCode}/report`);
    const responses = document.paths['/companies/{fiscalCode}/report'].get.responses;
    expect(validatorFor(document)(responses['401'].content['application/json'].schema)(refused.body)).toBe(true);
    expect(validatorFor(document)(responses['404'].content['application/json'].schema)(refused.body)).toBe(false);
    // A real 422 fits its schema; without its details it would not.
    const invalid = await fetchJson('/companies/123/report', bearer(full));
    expect(invalid.res.status).toBe(422);
    const invalidSchema = validatorFor(document)(responses['422'].content['application/json'].schema);
    expect(invalidSchema(invalid.body)).toBe(true);
    const { details: _details, ...withoutDetails } = invalid.body.error;
    expect(invalidSchema({ error: withoutDetails })).toBe(false);
  });

  it('then each success envelope pins meta.endpoint to its operation\'s slug', async () => {
    const { body: document } = await fetchJson('/openapi.json', bearer(full));
    const compile = validatorFor(document);
    for (const endpoint of endpointCatalogue) {
      const envelope = document.components.schemas[`${endpoint.schemaName}Envelope`];
      expect(envelope.properties.meta.allOf).toEqual([
        { $ref: '#/components/schemas/Meta' },
        { type: 'object', required: ['endpoint'], properties: { endpoint: expect.objectContaining({ type: 'string', const: endpoint.slug }) } },
      ]);
      const validate = compile(document.paths[endpoint.path].get.responses['200'].content['application/json'].schema);
      const { body } = await fetchJson(endpoint.path.replace(/\{\w+\}/, exampleCompanyCode), bearer(full));
      expect(validate(body)).toBe(true);
      const other = endpointCatalogue.find((e) => e.slug !== endpoint.slug)!;
      expect(validate({ ...body, meta: { ...body.meta, endpoint: other.slug } })).toBe(false);
    }
  });

  it('then a header is declared required (or referred to, which generators read as required) only where every real answer of that status sends it', async () => {
    const { body: document } = await fetchJson('/openapi.json', bearer(full));
    const components = document.components.headers;
    // As openapi-typescript reads them: a reference is always present, a header written out is
    // present if `required`. Both readings must agree: every component says required.
    for (const [name, header] of Object.entries<any>(components)) expect(header.required, name).toBe(true);
    const declared = (path: string, status: number) => {
      const headers = document.paths[path].get.responses[String(status)].headers as Record<string, any>;
      return {
        required: Object.entries(headers).filter(([, h]) => h.$ref || h.required).map(([name]) => name),
        optional: Object.entries(headers).filter(([, h]) => !h.$ref && !h.required).map(([name]) => name),
      };
    };
    const capped = await createTestOrganization(api.db);
    await api.db('allowances').where({ organization_id: capped.organizationId }).update({ limit_reached: true, credits_balance: 0, credits_exhausted: true });
    const limited = await createTestOrganization(api.db, { ratePerSecond: 1, burst: 1, ratePerMinute: 100 });
    await fetchJson(`/companies/${exampleCompanyCode}/report`, bearer(limited));
    const report = '/companies/{fiscalCode}/report';
    const financials = '/companies/{taxId}/financials';
    const at = (path: string, code: string) => path.replace(/\{\w+\}/, code);
    // [operation, what was asked, the status and code it answers]
    const cases: [string, Promise<{ res: Response; body: Json }>, number, string | null][] = [
      [report, fetchJson(at(report, exampleCompanyCode), bearer(full)), 200, null],
      [report, fetchJson(at(report, exampleCompanyCode)), 401, 'missing_api_key'],
      [report, fetchJson(at(report, exampleCompanyCode), { Authorization: `Bearer sk_live_${'0'.repeat(32)}` }), 401, 'invalid_api_key'],
      [financials, fetchJson(at(financials, exampleCompanyCode), bearer(capped)), 402, 'credits_exhausted'],
      [report, fetchJson(at(report, exampleCompanyCode), bearer(financialsOnly)), 403, 'not_entitled'],
      [report, fetchJson(at(report, '00000000001'), bearer(full)), 404, 'not_found'],
      // A client whose base URL is wrong asks every operation's path under another prefix.
      [report, fetchJson(`/v1${at(report, exampleCompanyCode)}`, bearer(full)), 404, 'unknown_endpoint'],
      [report, fetchJson(at(report, '12'), bearer(full)), 422, 'invalid_params'],
      [report, fetchJson(at(report, exampleCompanyCode), bearer(capped)), 429, 'limit_reached'],
      [report, fetchJson(at(report, exampleCompanyCode), bearer(limited)), 429, 'rate_limited'],
    ];
    const missingByStatus = new Map<string, Set<string>>();
    for (const [path, answer, status, code] of cases) {
      const { res, body } = await answer;
      expect([res.status, body.error?.code ?? null], `${path} ${code}`).toEqual([status, code]);
      const { required, optional } = declared(path, status);
      for (const name of required) expect(res.headers.get(name), `${status} ${code} ${name}`).not.toBeNull();
      for (const name of [...required, ...optional]) {
        if (res.headers.get(name) === null) missingByStatus.set(`${path} ${status}`, (missingByStatus.get(`${path} ${status}`) ?? new Set()).add(name));
      }
    }
    // The answers that leave headers out are the ones whose status declares them optional.
    expect(Object.fromEntries([...missingByStatus].map(([k, v]) => [k, [...v]]))).toEqual({
      [`${report} 404`]: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'],
    });
    expect(declared(report, 404).optional).toEqual(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(declared(report, 200).required).toEqual(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']);
    expect(declared(report, 429).required).toEqual(['X-Request-Id', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'Retry-After']);
    // 5xx: auth_unavailable is answered before a key is checked, internal_error may come from anywhere.
    expect(declared(report, 503)).toEqual({ required: ['X-Request-Id', 'Retry-After'], optional: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] });
    expect(declared(report, 500)).toEqual({ required: ['X-Request-Id'], optional: ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] });
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
