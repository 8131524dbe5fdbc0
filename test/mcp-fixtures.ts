import { inject } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createAccessControl, type AccessControl, type AccessControlHandle } from '../core/access/index.js';
import { createApiKey } from '../core/auth/index.js';
import { productCatalogue } from '../core/billing/products.js';
import { createCompanyStore, type CompanyStore } from '../core/companies/index.js';
import { companyDossierSchema, type CompanyDossier, type CompanyDossierInput } from '../core/companies/schemas/index.js';
import { createDatabaseProbe, createDb, type Db } from '../core/db/index.js';
import { newId, randomBase62 } from '../core/ids/index.js';
import { createLogger, type Logger } from '../core/logging/index.js';
import { createInMemoryRateLimiter, type RateLimiter } from '../core/ratelimit/index.js';
import { createPostgresUsageSink, type UsageSink } from '../core/usage/index.js';
import { createMcpApp } from '../mcp/http.js';
import { originCheck, type OriginCheckOptions } from '../mcp/origin-check.js';
import { listen, type RunningServer } from './api-fixtures.js';
import { fiscalCodes } from './support/company-dossiers.js';

// Shared set-up of the tool-server tests: each test makes its own plan, organization, key and
// companies with random identifiers and names, so files run in parallel on one database.

export const toolNames = productCatalogue.filter((p) => p.kind === 'tool').map((p) => p.slug as string);
export const personOnlyTools = [
  'service_list_official_documents', 'service_request_official_document', 'service_get_person_contacts', 'service_request_person_contacts', 'service_get_usage',
];

export interface ToolOrganization {
  organizationId: string;
  planId: string;
  key: string;
  keyId: string;
}

export interface ToolOrganizationOptions {
  /** Tool names in the plan; default every tool of the catalogue. */
  tools?: string[];
  /** Endpoint slugs in the plan; default none. */
  endpoints?: string[];
  ratePerSecond?: number;
  burst?: number;
  ratePerMinute?: number;
}

/** A plan of its own (so measures and limits are the test's), an organization on it, one key. */
export async function createToolOrganization(db: Db, options: ToolOrganizationOptions = {}): Promise<ToolOrganization> {
  const planId = `plan_mcp_test_${randomBase62(10)}`;
  const organizationId = newId('org');
  await db('plans').insert({
    id: planId,
    name: 'MCP test plan',
    rate_per_second: options.ratePerSecond ?? 1_000,
    burst: options.burst ?? 1_000,
    rate_per_minute: options.ratePerMinute ?? 100_000,
    credits_per_period: 1_000_000,
    calls_cap_per_period: 1_000_000,
  });
  const products = [...(options.tools ?? toolNames), ...(options.endpoints ?? [])];
  for (const slug of products) {
    const product = productCatalogue.find((p) => p.slug === slug)!;
    await db('plan_entitlements').insert({ plan_id: planId, product: slug, product_kind: product.kind, ...product.defaultMeasure });
  }
  await db('organizations').insert({ id: organizationId, name: `MCP test ${organizationId}`, plan_id: planId });
  await db('allowances').insert({ organization_id: organizationId, period: new Date().toISOString().slice(0, 7), credits_balance: 1_000_000, calls_used: 0, calls_cap: 1_000_000 });
  const created = await createApiKey(db, { organizationId, name: 'mcp test key' });
  return { organizationId, planId, key: created.key, keyId: created.record.id };
}

export interface TestMcpOptions {
  databaseUrl?: string;
  access?: AccessControl;
  rateLimiter?: RateLimiter;
  usage?: UsageSink;
  store?: CompanyStore;
  /** The app's logger (access control and store stay silent); default silent. */
  logger?: Logger;
  /** MCP_ALLOWED_ORIGINS and PUBLIC_MCP_URL as the server reads them; default neither (loopback origins only). */
  origins?: OriginCheckOptions;
  /** TRUST_GATEWAY_REQUEST_ID (off, as by default). */
  trustGatewayRequestId?: boolean;
  /** How long a batch may take before it is answered without its missing answers (default the server's). */
  answerDeadlineMs?: number;
  /** Largest accepted request body (default the server's). */
  maxBodyBytes?: number;
}

export interface TestMcp extends RunningServer {
  db: Db;
  access: AccessControl;
  /** http://host:port/mcp */
  mcpUrl: string;
}

/** The real tool server on a real port with real access control, store and Postgres usage sink. */
export async function startTestMcp(options: TestMcpOptions = {}): Promise<TestMcp> {
  const databaseUrl = options.databaseUrl ?? inject('databaseUrl');
  const logger = createLogger({ level: 'silent' });
  const db = createDb({ connectionString: databaseUrl, poolMax: 4, applicationName: 'mcp-test' });
  const rateLimiter = options.rateLimiter ?? createInMemoryRateLimiter();
  let owned: AccessControlHandle | undefined;
  const access = options.access ?? (owned = createAccessControl({
    db, listenConnectionString: databaseUrl, keyCacheTtlMs: 30_000, entitlementCacheTtlMs: 1_000, rateLimiter, logger,
  }));
  const store = options.store ?? createCompanyStore({ db, queryTimeoutMs: 5_000, logger });
  const app = createMcpApp({ access, usage: options.usage ?? createPostgresUsageSink(db, { logger }), store, db, checkDatabase: createDatabaseProbe(db), queryTimeoutMs: 5_000, logger: options.logger ?? logger, version: '1.0.0', isAllowedOrigin: originCheck(options.origins), trustGatewayRequestId: options.trustGatewayRequestId, answerDeadlineMs: options.answerDeadlineMs, maxBodyBytes: options.maxBodyBytes });
  const server = await listen(app);
  return {
    ...server,
    mcpUrl: `${server.url}/mcp`,
    db,
    access,
    close: async () => {
      await server.close();
      if (owned) {
        await owned.close();
        await rateLimiter.close();
      }
      await db.destroy();
    },
  };
}

/**
 * The official SDK client over Streamable HTTP, with the key as bearer header. Connecting is
 * three requests, each counted against the organization's rate limits: initialize, the
 * initialized notification, and a GET (answered 405) with which the client probes for an event
 * stream. The client sends the GET without waiting for it; this waits, so that a test counting
 * the organization's requests knows all three are counted.
 */
export async function connectClient(mcpUrl: string, key: string): Promise<Client> {
  const client = new Client({ name: 'mcp-test-client', version: '1.0.0' });
  let probed!: () => void;
  const probe = new Promise<void>((resolve) => { probed = resolve; });
  const fetchProbed: typeof fetch = (input, init) => {
    const answer = fetch(input, init);
    if (init?.method === 'GET') void answer.finally(probed).catch(() => undefined);
    return answer;
  };
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${key}` } }, fetch: fetchProbed });
  await client.connect(transport);
  await probe;
  return client;
}

/** Raw JSON-RPC over fetch, as the spec's connectivity check does it. */
export async function rpc(mcpUrl: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...headers },
    body: JSON.stringify(body),
  });
}

export const initializeRequest = (protocolVersion = '2025-06-18') => ({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion, capabilities: {}, clientInfo: { name: 'connectivity-check', version: '1.0.0' } },
});

// Full line items for three years, so every ratio of the analysis has its inputs.
function financialYear(year: number, scale: number) {
  const revenue = Math.round(5_000_000 * scale);
  const metrics: Record<string, number> = {
    revenue,
    operating_result: Math.round(revenue * 0.08),
    ebitda: Math.round(revenue * 0.12),
    net_income: Math.round(revenue * 0.05),
    interest_and_other_financial_charges: Math.round(revenue * 0.01),
    total_assets: Math.round(4_000_000 * scale),
    total_current_assets: Math.round(2_000_000 * scale),
    inventories: Math.round(500_000 * scale),
    cash_and_equivalents: Math.round(300_000 * scale),
    debts_due_within_one_year: Math.round(1_250_000 * scale),
    total_debts: Math.round(2_000_000 * scale),
    bank_debts: Math.round(900_000 * scale),
    total_equity: Math.round(1_600_000 * scale),
  };
  return {
    year,
    statementDate: `${year}-12-31`,
    employees: Math.round(40 * scale),
    metrics: Object.entries(metrics).map(([slug, value]) => ({ slug, value })),
  };
}

export interface SampleGroup {
  /** A random word in every legal name of the group, so name searches find only these. */
  token: string;
  root: CompanyDossier;
  holding: CompanyDossier;
  ultimateHolding: CompanyDossier;
  /** root → sub1 → sub2 → sub3 (and sub3 holds 10% of root: a cycle). */
  subs: CompanyDossier[];
  all: CompanyDossier[];
}

/**
 * A small group: ultimateHolding owns holding, holding owns root, root owns sub1, sub1 owns
 * sub2, sub2 owns sub3, and sub3 owns 10% of root (a cross-holding), all linked by fiscal code.
 */
export function sampleGroup(): SampleGroup {
  const next = fiscalCodes();
  const token = `Qz${randomBase62(6).replace(/[^A-Za-z]/g, 'k')}`.toLowerCase();
  const codes = { ultimate: next(), holding: next(), root: next(), sub1: next(), sub2: next(), sub3: next() };
  const lastYear = new Date().getUTCFullYear() - 1;
  const base = (fiscalCode: string, legalName: string, input: Partial<CompanyDossierInput>): CompanyDossier =>
    companyDossierSchema.parse({
      fiscalCode,
      vatNumber: fiscalCode,
      legalName,
      legalForm: 'SRL',
      naceCode: '62.01',
      naceSection: 'J',
      province: 'MI',
      municipality: 'Milano',
      address: { line1: 'Via Roma 1', line2: null, locality: 'Milano', postalCode: '20121', countryCode: 'IT' },
      registry: { pec: `${fiscalCode}@pec.it`, cciaa: 'MI', rea: `MI-${fiscalCode.slice(-6)}` },
      risk: { protestsOfBill: false, insolvencyProceedings: false, insolvencyApplications: false, assetEncumbrances: null, officersWithRiskIndicators: false },
      source: 'mcp-test',
      ...input,
    });
  const ultimateHolding = base(codes.ultimate, `${token} Capital S.P.A.`, {
    legalForm: 'SPA',
    shareholders: [{ name: 'Giulia Fontana', share: 1 }],
    subsidiaries: [{ name: `${token} Holding S.R.L.`, share: 1, fiscalCode: codes.holding }],
  });
  const holding = base(codes.holding, `${token} Holding S.R.L.`, {
    shareholders: [{ name: `${token} Capital S.P.A.`, share: 1, fiscalCode: codes.ultimate }],
    subsidiaries: [{ name: `${token} Costruzioni Meccaniche S.R.L.`, share: 0.9, fiscalCode: codes.root }],
  });
  const root = base(codes.root, `${token} Costruzioni Meccaniche S.R.L.`, {
    stateAids: { count: 2, countLast36Months: 1, amount: 50_000, amountLast36Months: 25_000 },
    shareholders: [
      { name: `${token} Holding S.R.L.`, share: 0.9, fiscalCode: codes.holding },
      { name: `${token} Sistemi S.R.L.`, share: 0.1, fiscalCode: codes.sub3 },
    ],
    beneficialOwners: [{ name: 'Giulia Fontana', share: 0.9 }],
    subsidiaries: [{ name: `${token} Impianti S.R.L.`, share: 1, fiscalCode: codes.sub1 }],
    officers: [
      { name: `Marco ${token} Bellini`, role: 'Amministratore unico', roleCategory: 'legal_representative' },
      { name: 'Anna Ferri', role: 'Sindaco', roleCategory: 'statutory_auditor' },
    ],
    branches: [{ legalName: 'Unità locale Torino', address: null }],
    years: [financialYear(lastYear, 1.1), financialYear(lastYear - 1, 1), financialYear(lastYear - 2, 0.95)],
  });
  const sub1 = base(codes.sub1, `${token} Impianti S.R.L.`, {
    shareholders: [{ name: `${token} Costruzioni Meccaniche S.R.L.`, share: 1, fiscalCode: codes.root }],
    subsidiaries: [{ name: `${token} Servizi S.R.L.`, share: 0.7, fiscalCode: codes.sub2 }],
    officers: [{ name: `Marco ${token} Bellini`, role: 'Consigliere', roleCategory: 'board_member' }],
    years: [financialYear(lastYear, 0.5)],
  });
  const sub2 = base(codes.sub2, `${token} Servizi S.R.L.`, {
    shareholders: [{ name: `${token} Impianti S.R.L.`, share: 0.7, fiscalCode: codes.sub1 }, { name: `Marco ${token} Bellini`, share: 0.3 }],
    subsidiaries: [{ name: `${token} Sistemi S.R.L.`, share: 0.6, fiscalCode: codes.sub3 }],
    years: [financialYear(lastYear, 0.2)],
  });
  const sub3 = base(codes.sub3, `${token} Sistemi S.R.L.`, {
    shareholders: [{ name: `${token} Servizi S.R.L.`, share: 0.6, fiscalCode: codes.sub2 }],
    subsidiaries: [{ name: `${token} Costruzioni Meccaniche S.R.L.`, share: 0.1, fiscalCode: codes.root }],
    dissolutionYear: lastYear,
    years: [financialYear(lastYear, 0.1)],
  });
  const subs = [sub1, sub2, sub3];
  return { token, root, holding, ultimateHolding, subs, all: [ultimateHolding, holding, root, ...subs] };
}

/** A response body as JSON, loosely typed for assertions. */
export const json = (res: Response): Promise<any> => res.json() as Promise<any>;
