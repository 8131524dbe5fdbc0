import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomInt } from 'node:crypto';
import type Koa from 'koa';
import { inject } from 'vitest';
import { createApp } from '../api/app.js';
import { createAccessControl, type AccessControlHandle } from '../core/access/index.js';
import { createCompanyStore } from '../core/companies/company-store.js';
import { createDatabaseProbe, createDb, type Db } from '../core/db/index.js';
import { createLogger, type Logger } from '../core/logging/index.js';
import { createInMemoryRateLimiter, type RateLimiter } from '../core/ratelimit/index.js';
import { createPostgresUsageSink, type UsageSink } from '../core/usage/index.js';
import { createApiKey } from '../core/auth/index.js';
import { companyDossierSchema, type CompanyDossier, type CompanyDossierInput } from '../core/companies/schemas/index.js';
import { upsertCompanies } from '../core/companies/write-companies.js';
import { endpointCatalogue, type CompanyLookups } from '../core/companies/endpoint-catalogue.js';
import { newId, randomBase62 } from '../core/ids/index.js';
import { freePort } from './services/free-port.js';

// Shared set-up of the API tests: each test makes its own plan, organization, key and
// companies with random identifiers, so files run in parallel on one database.

export const randomFiscalCode = (): string => Array.from({ length: 11 }, () => randomInt(10)).join('');
export const randomPersonalCode = (): string => `RSSMRA${randomInt(10, 99)}A01H${randomBase62(5).toUpperCase().replace(/[^A-Z0-9]/g, 'X')}`.slice(0, 16);

export function makeDossier(overrides: Partial<CompanyDossierInput> = {}): CompanyDossier {
  const year = new Date().getUTCFullYear() - 1;
  const years = [0, 1, 2].map((back) => ({
    year: year - back,
    size: 'small' as const,
    statementDate: `${year - back}-12-31`,
    employees: 20 + back,
    metrics: [
      { slug: 'revenue', value: 2_000_000 - back * 100_000 },
      { slug: 'total_assets', value: 1_500_000 - back * 50_000 },
    ],
  }));
  return companyDossierSchema.parse({
    fiscalCode: randomFiscalCode(),
    vatNumber: null,
    legalName: `Test Company ${randomBase62(6)} S.R.L.`,
    legalForm: 'SRL',
    foundingYear: 2001,
    incorporationDate: '2001-03-15',
    isQuoted: false,
    naceCode: '62.01',
    naceSection: 'J',
    address: { line1: 'Via Roma 1', line2: null, locality: 'Milano', postalCode: '20121', countryCode: 'IT' },
    registry: { pec: 'test@pec.it', cciaa: 'MI', rea: 'MI-1234567' },
    headcount: { employees: 20, asOf: `${year}-12-31` },
    risk: { protestsOfBill: false, insolvencyProceedings: false, insolvencyApplications: false, assetEncumbrances: null, officersWithRiskIndicators: false },
    stateAids: { count: 1, countLast36Months: 1, amount: 10_000, amountLast36Months: 10_000 },
    shareholders: [{ name: 'Mario Rossi', share: 0.6 }, { name: 'Anna Bianchi', share: 0.4 }],
    beneficialOwners: [{ name: 'Mario Rossi', share: 0.6 }],
    officers: [{ name: 'Mario Rossi', role: 'Amministratore unico', roleCategory: 'director' }],
    branches: [{ legalName: 'Sede di Torino', address: { line1: 'Via Po 2', line2: null, locality: 'Torino', postalCode: '10121', countryCode: 'IT' } }],
    years,
    source: 'api-test',
    ...overrides,
  });
}

export async function insertCompanies(db: Db, dossiers: CompanyDossier[]): Promise<void> {
  await upsertCompanies(db, dossiers);
}

export interface TestOrganization {
  organizationId: string;
  planId: string;
  key: string;
  keyId: string;
}

export interface TestOrganizationOptions {
  /** Endpoint slugs in the plan; default all four. */
  endpoints?: string[];
  /** false: the organization has no plan (client_not_configured). */
  withPlan?: boolean;
  ratePerSecond?: number;
  burst?: number;
  ratePerMinute?: number;
}

/** A plan of its own (so measures and limits are the test's), an organization on it, one key. */
export async function createTestOrganization(db: Db, options: TestOrganizationOptions = {}): Promise<TestOrganization> {
  const planId = `plan_api_test_${randomBase62(10)}`;
  const organizationId = newId('org');
  const endpoints = options.endpoints ?? endpointCatalogue.map((e) => e.slug);
  await db('plans').insert({
    id: planId,
    name: 'API test plan',
    rate_per_second: options.ratePerSecond ?? 1_000,
    burst: options.burst ?? 1_000,
    rate_per_minute: options.ratePerMinute ?? 100_000,
    credits_per_period: 1_000_000,
    calls_cap_per_period: 1_000_000,
  });
  for (const slug of endpoints) {
    const endpoint = endpointCatalogue.find((e) => e.slug === slug)!;
    await db('plan_entitlements').insert({ plan_id: planId, product: slug, product_kind: 'endpoint', ...endpoint.defaultMeasure });
  }
  await db('organizations').insert({ id: organizationId, name: `API test ${organizationId}`, plan_id: options.withPlan === false ? null : planId });
  const period = new Date().toISOString().slice(0, 7);
  await db('allowances').insert({ organization_id: organizationId, period, credits_balance: 1_000_000, calls_used: 0, calls_cap: 1_000_000 });
  const created = await createApiKey(db, { organizationId, name: 'api test key' });
  return { organizationId, planId, key: created.key, keyId: created.record.id };
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

export async function listen(app: Koa<any>, atPort = 0): Promise<RunningServer> {
  const server = http.createServer(app.callback());
  await new Promise<void>((resolve) => server.listen(atPort, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones: the target looks dead. */
  cut(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback TCP proxy in front of Postgres, so a test can make "the database" vanish for one app only. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => s.destroy());
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const cut = async () => {
    // close() only calls back once every connection has ended, so end them after asking.
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const s of sockets) s.destroy();
    await closed;
  };
  return { port, cut, close: () => (server.listening ? cut() : Promise.resolve()) };
}

/** The same database URL reached through another host:port (a proxy, or a port nobody listens on). */
export function viaPort(databaseUrl: string, port: number): string {
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  return url.toString();
}

export interface TestApiOptions {
  /** Defaults to the run's database. */
  databaseUrl?: string;
  store?: CompanyLookups;
  usage?: UsageSink;
  storeQueryTimeoutMs?: number;
  keyCacheTtlMs?: number;
  entitlementCacheTtlMs?: number;
  rateLimiter?: RateLimiter;
  /** Silent unless given. */
  logger?: Logger;
  /** TRUST_GATEWAY_REQUEST_ID (off, as by default). */
  trustGatewayRequestId?: boolean;
  /** The documents' `servers` (PUBLIC_BASE_URL) name this API's own address, as in a real
   * deployment, so a client reading them (the /docs page's "Try it out") reaches it. Otherwise
   * a placeholder, http://127.0.0.1. */
  ownPublicBaseUrl?: boolean;
}

export interface TestApi extends RunningServer {
  db: Db;
  access: AccessControlHandle;
}

/** The real app on a real port with real access control, store and Postgres usage sink. */
export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const databaseUrl = options.databaseUrl ?? inject('databaseUrl');
  const logger = options.logger ?? createLogger({ level: 'silent' });
  const db = createDb({ connectionString: databaseUrl, poolMax: 4, applicationName: 'api-test' });
  const rateLimiter = options.rateLimiter ?? createInMemoryRateLimiter();
  const access = createAccessControl({
    db,
    listenConnectionString: databaseUrl,
    keyCacheTtlMs: options.keyCacheTtlMs ?? 30_000,
    entitlementCacheTtlMs: options.entitlementCacheTtlMs ?? 1_000,
    rateLimiter,
    logger,
  });
  const store = options.store ?? createCompanyStore({ db, queryTimeoutMs: options.storeQueryTimeoutMs ?? 2_000, logger });
  const usage = options.usage ?? createPostgresUsageSink(db, { logger });
  const port = options.ownPublicBaseUrl ? await freePort() : 0;
  const app = createApp({
    access,
    store,
    usage,
    logger,
    publicBaseUrl: port ? `http://127.0.0.1:${port}` : 'http://127.0.0.1',
    // A local start's tool server, as api/compose.ts names it (the guide's own address).
    publicMcpUrl: 'http://127.0.0.1:3001',
    checkDatabase: createDatabaseProbe(db),
    trustGatewayRequestId: options.trustGatewayRequestId,
    // 'large' asks for the profile's second example (api/openapi/openapi-documents.ts).
    findExampleCompany: async (kind?: 'large') => (kind === 'large' ? largeExampleCompanyCode : exampleCompanyCode),
  });
  const server = await listen(app, port);
  return {
    ...server,
    db,
    access,
    close: async () => {
      await server.close();
      await access.close();
      await rateLimiter.close();
      await db.destroy();
    },
  };
}

/** The fiscal code the OpenAPI examples use: one company every API test file inserts. */
export const exampleCompanyCode = '09999999999';

export async function ensureExampleCompany(db: Db): Promise<void> {
  await insertCompanies(db, [makeDossier({ fiscalCode: exampleCompanyCode, legalName: 'Esempio Dati S.R.L.' })]);
}

/** The large company of the OpenAPI profile's second example (its `peerCount` + `peers` branch). */
export const largeExampleCompanyCode = '09999999998';

/**
 * It and two peers, in a NACE division (35) no other test uses, so their peer counts and
 * rankings are not disturbed.
 */
export async function ensureLargeExampleCompany(db: Db): Promise<void> {
  const year = new Date().getUTCFullYear() - 1;
  const large = (fiscalCode: string, legalName: string, employees: number, revenue: number) => makeDossier({
    fiscalCode,
    legalName,
    legalForm: 'SPA',
    naceCode: '35.11',
    naceSection: 'D',
    headcount: { employees, asOf: `${year}-12-31` },
    years: [{
      year,
      size: 'large',
      statementDate: `${year}-12-31`,
      employees,
      metrics: [{ slug: 'revenue', value: revenue }, { slug: 'total_assets', value: revenue * 0.8 }],
    }],
  });
  await insertCompanies(db, [
    large(largeExampleCompanyCode, 'Esempio Energia S.P.A.', 900, 120_000_000),
    large('09999999997', 'Esempio Reti S.P.A.', 600, 90_000_000),
    large('09999999996', 'Esempio Servizi S.P.A.', 300, 60_000_000),
  ]);
}
