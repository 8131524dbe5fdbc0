import { z } from 'zod';
import type { Measure } from '../../core/access/index.js';
import { API_KEY_SHAPE } from '../../core/auth/index.js';
import { notFoundMessage, paramRefusal, type EndpointDefinition, type Language } from '../../core/companies/endpoint-catalogue.js';
import type { CompanyProfileData } from '../../core/companies/schemas/index.js';
import { errorCatalogue, errorCodes, requestIdSchema, type ErrorCode } from '../../core/errors/index.js';
import { wwwAuthenticateValues } from '../www-authenticate.js';
import { envelopeSchemaName, narrowed, type JsonSchema } from './component-schemas.js';
import { documentTexts } from './texts.js';

export interface DocumentedEndpoint {
  endpoint: EndpointDefinition;
  measure: Measure;
}

export interface CompanyExample {
  /** The identifier the example was fetched with (path parameter example). */
  id: string;
  /** Endpoint slug → the `data` the store returned for it. */
  data: Map<string, unknown>;
  /** A large company and its profile (the `peerCount` + `peers` branch), when the store holds one. */
  largeProfile: { id: string; data: CompanyProfileData } | null;
}

export interface BuildDocumentOptions {
  language: Language;
  serverUrl: string;
  endpoints: DocumentedEndpoint[];
  components: Record<string, JsonSchema>;
  example: CompanyExample | null;
  /** True for a key's own document (measures are the organization's), false for /docs. */
  forOrganization: boolean;
}

const exampleRequestId = 'req_3f0c9a52-7d1e-4b8a-9c61-2e5d4a7b8f10';
const rateLimitHeaderNames = ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'] as const;
// The tag's name is the same in both languages: generated clients name their classes and folders
// by it. Its heading for readers is `x-displayName`, in the document's language.
const tagName = 'Companies';
// The header carries what `meta.requestId` and `error.requestId` do: the same schema.
const { $schema: _dialect, ...requestIdHeaderSchema } = z.toJSONSchema(requestIdSchema, { target: 'draft-2020-12' });

// Error codes an operation can answer with: each allowance flag refuses only the calls priced in
// its own unit (decisions.md "Plans, usage and allowances"), and a call priced at 0 credits
// costs nothing, so access control serves it even with the balance exhausted: no 402 for it.
// (A call priced at 0 calls is still refused once the calls cap is reached.)
function errorCodesFor(measure: Measure): ErrorCode[] {
  const costsCredits = measure.unit === 'credits' && measure.quantity > 0;
  return errorCodes.filter((code) => (code !== 'credits_exhausted' || costsCredits) && (code !== 'limit_reached' || measure.unit === 'calls'));
}

// The profile answers in one of two shapes (decisions.md "Company profile branch"), so its
// examples are named, one per branch the store can show; the other operations have one.
const branchingEndpoint = 'company-profile';
type ProfileExampleName = 'smallCompany' | 'largeCompany';

function profileExamples(example: CompanyExample): Map<ProfileExampleName, { id: string; data: CompanyProfileData }> {
  const found = new Map<ProfileExampleName, { id: string; data: CompanyProfileData }>();
  const own = example.data.get(branchingEndpoint) as CompanyProfileData | undefined;
  for (const candidate of [own && { id: example.id, data: own }, example.largeProfile]) {
    if (!candidate) continue;
    const name = 'peers' in candidate.data ? 'largeCompany' : 'smallCompany';
    if (!found.has(name)) found.set(name, candidate);
  }
  return found;
}

// The refusals that say when to try again (decisions.md for the two 429s; the two 503s name the
// second after which the key and plan caches ask Postgres again).
const retryAfterCodes = new Set<ErrorCode>(['rate_limited', 'limit_reached', 'auth_unavailable', 'entitlement_unavailable']);
// Whether a refusal carries RateLimit-*. Always once the request was counted against the
// organization's limit (core/access); never when it was answered before a key was read (a 401,
// unknown_endpoint) or the key could not be checked (auth_unavailable). internal_error can come
// from anywhere; entitlement_unavailable and invalid_params carry them only when the plan's
// limits could be read (not for an organization whose plan state was never read).
type Carried = 'always' | 'sometimes' | 'never';
const rateLimitHeadersOn = (code: ErrorCode): Carried => {
  if (['missing_api_key', 'invalid_api_key', 'unknown_endpoint', 'auth_unavailable'].includes(code)) return 'never';
  if (['internal_error', 'entitlement_unavailable', 'invalid_params'].includes(code)) return 'sometimes';
  return 'always';
};

export function buildOpenApiDocument(options: BuildDocumentOptions): Record<string, unknown> {
  const texts = documentTexts[options.language];
  const paths: Record<string, unknown> = {};
  for (const { endpoint, measure } of options.endpoints) paths[endpoint.path] = { get: operation(endpoint, measure, options) };

  return {
    openapi: '3.1.0',
    // No jsonSchemaDialect: OpenAPI 3.1's default dialect is JSON Schema 2020-12 with the OAS
    // vocabulary, which these schemas are written in; naming plain 2020-12 instead made the /docs
    // page (Swagger UI) show a warning box to every reader.
    info: { title: texts.title, version: '1.0.0', description: texts.description },
    servers: [{ url: options.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: [{ name: tagName, description: texts.tag.description, 'x-displayName': texts.tag.displayName }],
    paths,
    components: {
      schemas: options.components,
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: API_KEY_SHAPE, description: texts.securityDescription } },
      headers: headerComponents(options.language),
    },
  };
}

/**
 * Each header as a response that always carries it declares it: `required`. A response that may
 * leave one out writes the header out in place without `required` instead of referring here
 * (headersOf): openapi-typescript types a referenced header as always present, whatever the
 * component says, and OpenAPI lets a reference override no more than its description.
 */
function headerComponents(language: Language): Record<string, JsonSchema> {
  const texts = documentTexts[language].headers;
  return {
    'X-Request-Id': { description: texts.requestId, required: true, schema: requestIdHeaderSchema },
    'WWW-Authenticate': { description: texts.wwwAuthenticate, required: true, schema: { type: 'string', enum: [...wwwAuthenticateValues] } },
    'RateLimit-Limit': { description: texts.limit, required: true, schema: { type: 'integer', minimum: 0 } },
    'RateLimit-Remaining': { description: texts.remaining, required: true, schema: { type: 'integer', minimum: 0 } },
    'RateLimit-Reset': { description: texts.reset, required: true, schema: { type: 'integer', minimum: 0 } },
    'Retry-After': { description: texts.retryAfter, required: true, schema: { type: 'integer', minimum: 1 } },
  };
}

/** A response's headers: `always` as references to the components, `sometimes` written out optional. */
function headersOf(language: Language, always: readonly string[], sometimes: readonly string[] = []): Record<string, unknown> {
  const components = headerComponents(language);
  return Object.fromEntries([
    ...always.map((name) => [name, { $ref: `#/components/headers/${name}` }]),
    ...sometimes.map((name) => {
      const { required: _always, ...header } = components[name]!;
      return [name, header];
    }),
  ]);
}

/**
 * The error envelope of one status of one operation: `error.code` pinned to the codes that
 * status can carry there (see `narrowed` for why an allOf of the one ErrorEnvelope). Written in
 * the response, not as a component: which codes a status carries depends on the operation
 * (a 402 only where the call costs credits, limit_reached in a 429 only where it costs calls).
 */
function errorSchema(codes: readonly ErrorCode[]): JsonSchema {
  // `error` is pinned as an allOf of the Error component too, not as a bare object beside it:
  // a linter that checks examples against closed objects (Redocly's default) took the bare pin
  // for the whole error, and refused every example's message and requestId (116 warnings).
  // A 422 always lists what failed (decisions.md: one {path, message} per failure), so its
  // details are pinned as present: a generated client need not test for them.
  const pins: Record<string, JsonSchema> = { code: { type: 'string', enum: [...codes] } };
  if (codes.every((code) => code === 'invalid_params')) pins.details = { type: 'array', minItems: 1 };
  return narrowed('#/components/schemas/ErrorEnvelope', { error: narrowed('#/components/schemas/Error', pins) });
}

function operation(endpoint: EndpointDefinition, measure: Measure, options: BuildDocumentOptions): Record<string, unknown> {
  const texts = documentTexts[options.language];
  const own = endpoint.texts[options.language];
  const param = endpoint.param.schema.toJSONSchema({ target: 'draft-2020-12' });
  delete (param as JsonSchema).$schema;

  const envelope = (data: unknown) => ({ data, meta: { requestId: exampleRequestId, endpoint: endpoint.slug, usage: measure } });
  const success: Record<string, unknown> = { schema: { $ref: `#/components/schemas/${envelopeSchemaName(endpoint.schemaName)}` } };
  const paramExamples: Record<string, unknown> = {};
  if (options.example && endpoint.slug === branchingEndpoint) {
    // Named alike for the parameter and the answer, so each answer goes with its company.
    const named = [...profileExamples(options.example)];
    if (named.length > 0) {
      success.examples = Object.fromEntries(named.map(([name, { data }]) => [name, { summary: texts.profileExamples[name], value: envelope(data) }]));
      paramExamples.examples = Object.fromEntries(named.map(([name, { id }]) => [name, { summary: texts.profileExamples[name], value: id }]));
    }
  } else if (options.example) {
    const exampleData = options.example.data.get(endpoint.slug);
    if (exampleData !== undefined) success.example = envelope(exampleData);
    paramExamples.example = options.example.id;
  }

  const responses: Record<string, unknown> = {
    200: {
      description: texts.successDescription,
      headers: headersOf(options.language, ['X-Request-Id', ...rateLimitHeaderNames]),
      content: { 'application/json': success },
    },
  };
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesFor(measure)) {
    const status = errorCatalogue[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    // Each optional header is declared on a status if some code of it sends it, required if all do.
    const always: string[] = ['X-Request-Id'];
    const sometimes: string[] = [];
    const classify = (names: readonly string[], carried: (code: ErrorCode) => Carried) => {
      const seen = new Set(codes.map(carried));
      if (seen.size === 1 && seen.has('always')) always.push(...names);
      else if (!(seen.size === 1 && seen.has('never'))) sometimes.push(...names);
    };
    // A 401 answers a request no key authenticated: nothing was counted, no RateLimit-* is sent;
    // it names the scheme to authenticate with instead.
    classify(['WWW-Authenticate'], (code) => (errorCatalogue[code].status === 401 ? 'always' : 'never'));
    classify(rateLimitHeaderNames, rateLimitHeadersOn);
    classify(['Retry-After'], (code) => (retryAfterCodes.has(code) ? 'always' : 'never'));
    responses[status] = {
      description: [texts.statusDescriptions[status] ?? '', ...codes.map((c) => `\`${c}\`: ${texts.errorCodes[c]}`)].join('\n\n'),
      headers: headersOf(options.language, always, sometimes),
      content: {
        'application/json': {
          schema: errorSchema(codes),
          examples: Object.fromEntries(codes.map((code) => [code, { summary: code, value: errorExample(code, endpoint) }])),
        },
      },
    };
  }

  return {
    operationId: endpoint.slug.replace(/-(\w)/g, (_, c: string) => c.toUpperCase()),
    tags: [tagName],
    summary: own.summary,
    description: `${own.description}\n\n${texts.usageSentence(measure, options.forOrganization)}`,
    parameters: [
      {
        name: endpoint.param.name,
        in: 'path',
        required: true,
        description: own.parameter,
        schema: param,
        ...paramExamples,
      },
    ],
    responses,
    'x-usage': { quantity: measure.quantity, unit: measure.unit },
  };
}

function errorExample(code: ErrorCode, endpoint: EndpointDefinition) {
  const error: Record<string, unknown> = { code, message: errorCatalogue[code].message, requestId: exampleRequestId };
  // As the server words it, for an identifier no company has.
  if (code === 'not_found') error.message = notFoundMessage(endpoint.param.name, endpoint.param.name === 'fiscalCode' ? '00000000000' : 'IT00000000000');
  // The detail is the parameter schema's own refusal of a typical bad value (a code too short, an
  // empty tax ID), so the example says what the server says.
  if (code === 'invalid_params') {
    const refused = endpoint.param.schema.safeParse(endpoint.param.name === 'fiscalCode' ? '12' : '');
    Object.assign(error, paramRefusal(endpoint.param.name, refused.error?.issues ?? []));
  }
  return { error };
}
