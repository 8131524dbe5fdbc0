// What the billing fault script and the billing bench share: services (Postgres and Kafka,
// from the environment or started here like the test suite does), a fresh migrated database,
// customers with keys, a company to ask for, and the API app built in-process.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { createApp } from '../../api/app.js';
import { createAccessControl } from '../../core/access/index.js';
import { createApiKey } from '../../core/auth/index.js';
import { changeCredits } from '../../core/billing/adjust-allowance.js';
import { periodOf } from '../../core/billing/billing-period.js';
import { createCompanyStore } from '../../core/companies/company-store.js';
import { companyDossierSchema } from '../../core/companies/schemas/index.js';
import { upsertCompanies } from '../../core/companies/write-companies.js';
import { createDatabaseProbe, createDb, migrateLatest } from '../../core/db/index.js';
import { newId } from '../../core/ids/index.js';
import type { Logger } from '../../core/logging/index.js';
import { createInMemoryRateLimiter } from '../../core/ratelimit/index.js';
import type { UsageSink } from '../../core/usage/index.js';
import { createDatabase, dropDatabase, uniqueDatabaseName } from '../services/databases.js';
import { dockerEngineAnswers } from '../services/docker-engine.js';
import { startKafkaServer } from '../services/kafka-server.js';
import { startPostgresServer } from '../services/postgres-server.js';

export interface Services {
  databaseUrl: string;
  brokers: string[];
  /** For restarting the broker (test/services/kafka-control.ts); absent when not ours. */
  kafkaControlFile: string;
  kafkaControllable: boolean;
  stop(): Promise<void>;
}

/** DATABASE_URL / KAFKA_BROKERS when set, otherwise started here (as `npm test` does). */
export async function startServices(name: string, log: (line: string) => void): Promise<Services> {
  const env = process.env;
  const runDir = await mkdtemp(path.join(os.tmpdir(), `icd-${name}-`));
  await chmod(runDir, 0o755);
  const docker = (!env.DATABASE_URL || !env.KAFKA_BROKERS) && (await dockerEngineAnswers(env.DOCKER_HOST));
  const kafkaControlFile = path.join(runDir, 'kafka-control.json');
  const [pg, kafka] = await Promise.all([
    startPostgresServer({ databaseUrl: env.DATABASE_URL, docker, log }),
    startKafkaServer({
      brokersEnv: env.KAFKA_BROKERS,
      skip: false,
      docker,
      controlFile: kafkaControlFile,
      cacheRoot: path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'italian-company-data'),
      workDir: runDir,
      log,
    }),
  ]);
  const database = uniqueDatabaseName(name);
  const databaseUrl = await createDatabase(pg.serverUrl, database);
  const db = createDb({ connectionString: databaseUrl, poolMax: 1 });
  await migrateLatest(db);
  await db.destroy();
  log(`postgres: ${pg.source}, database ${database}; kafka: ${kafka.source}`);
  return {
    databaseUrl,
    brokers: kafka.brokers,
    kafkaControlFile,
    kafkaControllable: !env.KAFKA_BROKERS,
    stop: async () => {
      await dropDatabase(pg.serverUrl, database).catch(() => {});
      await kafka.stop();
      await pg.stop();
      await rm(runDir, { recursive: true, force: true });
    },
  };
}

export const COMPANY_CODE = '01234567897';

export async function insertCompany(db: Knex): Promise<void> {
  const year = new Date().getUTCFullYear() - 1;
  await upsertCompanies(db, [
    companyDossierSchema.parse({
      fiscalCode: COMPANY_CODE,
      vatNumber: null,
      legalName: 'Banco di Prova S.R.L.',
      legalForm: 'SRL',
      foundingYear: 2001,
      incorporationDate: '2001-03-15',
      isQuoted: false,
      naceCode: '62.01',
      naceSection: 'J',
      address: { line1: 'Via Roma 1', line2: null, locality: 'Milano', postalCode: '20121', countryCode: 'IT' },
      registry: { pec: 'prova@pec.it', cciaa: 'MI', rea: 'MI-1234567' },
      headcount: { employees: 20, asOf: `${year}-12-31` },
      risk: { protestsOfBill: false, insolvencyProceedings: false, insolvencyApplications: false, assetEncumbrances: null, officersWithRiskIndicators: false },
      stateAids: { count: 0, countLast36Months: 0, amount: 0, amountLast36Months: 0 },
      shareholders: [{ name: 'Mario Rossi', share: 1 }],
      beneficialOwners: [{ name: 'Mario Rossi', share: 1 }],
      officers: [{ name: 'Mario Rossi', role: 'Amministratore unico', roleCategory: 'director' }],
      branches: [],
      years: [0, 1, 2].map((back) => ({
        year: year - back,
        size: 'small',
        statementDate: `${year - back}-12-31`,
        employees: 20,
        metrics: [{ slug: 'revenue', value: 2_000_000 }, { slug: 'total_assets', value: 1_500_000 }],
      })),
      source: 'billing-bench',
    }),
  ]);
}

export interface Customer {
  organizationId: string;
  key: string;
}

/** Organizations on a plan of the spec's measures with generous rate limits, one key each. */
export async function createCustomers(db: Knex, count: number, credits: number, planId = `bench_${newId('p', 8)}`): Promise<Customer[]> {
  await db('plans').insert({ id: planId, name: planId, rate_per_second: 1_000_000, burst: 1_000_000, rate_per_minute: 60_000_000, credits_per_period: 0, calls_cap_per_period: null }).onConflict('id').ignore();
  await db('plan_entitlements')
    .insert([
      { plan_id: planId, product: 'company-report', product_kind: 'endpoint', quantity: 1, unit: 'calls' },
      { plan_id: planId, product: 'company-credit-report', product_kind: 'endpoint', quantity: 10, unit: 'credits' },
      { plan_id: planId, product: 'company-profile', product_kind: 'endpoint', quantity: 8, unit: 'credits' },
      { plan_id: planId, product: 'company-financials', product_kind: 'endpoint', quantity: 5, unit: 'credits' },
    ])
    .onConflict(['plan_id', 'product'])
    .ignore();
  const customers: Customer[] = [];
  for (let i = 0; i < count; i++) {
    const organizationId = newId('org');
    await db('organizations').insert({ id: organizationId, name: `Bench ${organizationId}`, plan_id: planId });
    await db('allowances').insert({ organization_id: organizationId, period: periodOf(new Date()) });
    if (credits > 0) await changeCredits(db, { organizationId, kind: 'grant', credits, actor: 'bench', reason: 'bench set-up' });
    const { key } = await createApiKey(db, { organizationId, name: 'bench' });
    customers.push({ organizationId, key });
  }
  return customers;
}

export interface InProcessApi {
  url: string;
  close(): Promise<void>;
}

/** The real app (access control, store, given sink) listening on a random port. */
export async function startInProcessApi(options: { db: Knex; databaseUrl: string; usage: UsageSink; logger: Logger }): Promise<InProcessApi> {
  const { db, logger } = options;
  const rateLimiter = createInMemoryRateLimiter();
  const access = createAccessControl({ db, listenConnectionString: options.databaseUrl, keyCacheTtlMs: 30_000, entitlementCacheTtlMs: 1_000, rateLimiter, logger });
  const app = createApp({
    access,
    store: createCompanyStore({ db, queryTimeoutMs: 2_000, logger }),
    usage: options.usage,
    logger,
    publicBaseUrl: 'http://127.0.0.1',
    publicMcpUrl: 'http://127.0.0.1:3001',
    checkDatabase: createDatabaseProbe(db),
    findExampleCompany: async () => COMPANY_CODE,
  });
  const server = http.createServer(app.callback());
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await access.close();
      await rateLimiter.close();
    },
  };
}

export const percentile = (sorted: number[], p: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);

export interface ManagedProcess {
  name: string;
  start(): Promise<void>;
  /** kill -9: a crash, no shutdown code runs. */
  kill9(): void;
  /** SIGTERM and wait for the exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** A child that ended without being asked to (neither kill9 nor stop). */
export interface UnplannedExit {
  name: string;
  code: number | null;
  signal: NodeJS.Signals | null;
}

/**
 * A child process of ours run from source (`node --import tsx script`), output appended to
 * `logDir/name.log`; `ready` decides when start() resolves. With `supervise`, a child that ends
 * by itself (a billing worker whose consumer failed for good exits 1 for its supervisor to
 * restart it) is reported there and started again a second later, as a supervisor would.
 */
export function managedProcess(options: {
  name: string;
  script: string;
  env: NodeJS.ProcessEnv;
  logDir: string;
  ready?: () => Promise<void>;
  supervise?: (exit: UnplannedExit) => void;
  /** A supervised restart that did not come up (its `ready` failed): the process stays down. */
  restartFailed?: (name: string, err: unknown) => void;
}): ManagedProcess {
  const root = path.resolve(import.meta.dirname, '../..');
  let child: ChildProcess | undefined;
  // Set by kill9 and stop: the exit that follows was asked for.
  let ending = false;
  const start = async (): Promise<void> => {
    ending = false;
    const log = createWriteStream(path.join(options.logDir, `${options.name}.log`), { flags: 'a' });
    const c = spawn(process.execPath, ['--import', 'tsx', options.script], { cwd: root, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    child = c;
    c.stdout!.pipe(log);
    c.stderr!.pipe(log);
    c.once('exit', (code, signal) => {
      if (ending || child !== c || !options.supervise) return;
      options.supervise({ name: options.name, code, signal });
      setTimeout(() => {
        if (!ending && child === c) start().catch((err: unknown) => options.restartFailed?.(options.name, err));
      }, 1_000);
    });
    if (options.ready) await options.ready();
  };
  return {
    name: options.name,
    start,
    kill9() {
      ending = true;
      child?.kill('SIGKILL');
    },
    stop() {
      ending = true;
      const c = child;
      if (!c || c.exitCode !== null) return Promise.resolve(c?.exitCode ?? null);
      return new Promise((resolve) => {
        c.once('exit', (code) => resolve(code));
        c.kill('SIGTERM');
      });
    },
  };
}

export async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** An API process (test/fault/api-process.ts) on `port`, ready once /healthz answers. */
export function apiProcess(
  name: string,
  port: number,
  env: NodeJS.ProcessEnv,
  logDir: string,
  supervision: { supervise?: (exit: UnplannedExit) => void; restartFailed?: (name: string, err: unknown) => void } = {},
): ManagedProcess {
  return managedProcess({
    name,
    ...supervision,
    script: 'test/fault/api-process.ts',
    env: { ...env, API_PORT: String(port) },
    logDir,
    ready: () => waitUntil(`api on ${port}`, async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 60_000),
  });
}
