// The API and the billing pipeline together, on both buses: what a 2xx serves is charged
// exactly once; 4xx and 5xx are never charged; flags the worker sets are enforced by the API
// within a second and cleared by a top-up. Each bus runs on a database of its own.
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka, createKafkaUsageConsumer, createKafkaUsageSink } from '../adapters/kafka/index.js';
import { startBillingWorker, type BillingWorker } from '../billing-worker/start-billing-worker.js';
import { createApiKey } from '../core/auth/index.js';
import { changeCredits } from '../core/billing/adjust-allowance.js';
import { reconcileLedger } from '../core/billing/reconcile-ledger.js';
import { createCompanyStore } from '../core/companies/company-store.js';
import type { CompanyLookups } from '../core/companies/endpoint-catalogue.js';
import { createDb, migrateLatest } from '../core/db/index.js';
import { AppError } from '../core/errors/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageConsumer, createPostgresUsageSink, type UsageBusConsumer, type UsageSink } from '../core/usage/index.js';
import { insertCompanies, makeDossier, randomFiscalCode, startTestApi, type TestApi } from './api-fixtures.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { kafkaBrokers } from './support/kafka.js';
import { allowanceOf, createBillingOrg, waitFor, type BillingOrgOptions } from './billing-fixtures.js';

const logger = createLogger({ level: 'silent' });
const BROKEN = '00000000000'; // the store fails for this code: a 502

function failingFor(code: string, store: CompanyLookups): CompanyLookups {
  const guard = <T>(c: string, run: () => Promise<T>) => (c === code ? Promise.reject(new AppError('upstream_error')) : run());
  return {
    companyReport: (c) => guard(c, () => store.companyReport(c)),
    creditReport: (c) => guard(c, () => store.creditReport(c)),
    companyProfile: (c) => guard(c, () => store.companyProfile(c)),
    companyFinancials: (c) => guard(c, () => store.companyFinancials(c)),
  };
}

describe.each(['postgres', 'kafka'])('the API billing through the %s bus', (bus) => {
  let scratch: ScratchDatabase;
  let db: Knex;
  let api: TestApi;
  let sink: UsageSink;
  let worker: BillingWorker;
  const company = makeDossier();

  beforeAll(async () => {
    scratch = await createScratchDatabase(`billing_api_${bus}`);
    db = createDb({ connectionString: scratch.url, poolMax: 6, applicationName: 'billing-api-test' });
    await migrateLatest(db);
    await insertCompanies(db, [company]);
    let consumer: UsageBusConsumer;
    if (bus === 'kafka') {
      const suffix = randomUUID().slice(0, 8);
      const kafka = createKafka({ brokers: kafkaBrokers(), clientId: 'billing-api-test', logger });
      const topic = `usage-events-api-${suffix}`;
      sink = createKafkaUsageSink({ kafka, topic, partitions: 3, logger });
      consumer = createKafkaUsageConsumer({ kafka, db, topic, deadLetterTopic: `${topic}-dlq`, groupId: `billing-api-${suffix}`, partitions: 3, logger });
    } else {
      sink = createPostgresUsageSink(db, { logger });
      consumer = createPostgresUsageConsumer({ db, connectionString: scratch.url, logger, pollMs: 200 });
    }
    const store = failingFor(BROKEN, createCompanyStore({ db, queryTimeoutMs: 2_000, logger }));
    api = await startTestApi({ databaseUrl: scratch.url, usage: sink, store, entitlementCacheTtlMs: 1_000 });
    worker = await startBillingWorker({ db, consumer, logger, rolloverIntervalMs: 60_000 });
  });
  afterAll(async () => {
    await worker?.stop();
    await api?.close();
    await sink?.close();
    await db?.destroy();
    await scratch?.drop();
  });

  const newCustomer = async (options: BillingOrgOptions) => {
    const org = await createBillingOrg(db, options);
    const { key } = await createApiKey(db, { organizationId: org.organizationId, name: 'billing test' });
    return { ...org, key };
  };
  const get = async (key: string, path: string) => {
    const res = await fetch(`${api.url}${path}`, { headers: { Authorization: `Bearer ${key}` } });
    const body = (await res.json()) as { error?: { code: string } };
    return { status: res.status, requestId: res.headers.get('x-request-id')!, retryAfter: res.headers.get('retry-after'), code: body.error?.code };
  };
  const ledgerIds = async (organizationId: string) => new Set(await db('usage_ledger').where({ organization_id: organizationId, entry_type: 'usage' }).pluck<string[]>('event_id'));

  it('when calls return 2xx then each is charged exactly once, and 401/404/422/429/5xx are never charged', async () => {
    const customer = await newCustomer({ credits: 10_000 });
    const slow = await newCustomer({ credits: 10_000, ratePerSecond: 1, burst: 1 });
    const results = [
      ...(await Promise.all(Array.from({ length: 6 }, () => get(customer.key, `/companies/${company.fiscalCode}/financials`)))),
      ...(await Promise.all(Array.from({ length: 4 }, () => get(customer.key, `/companies/${company.fiscalCode}/report`)))),
      await get(customer.key, `/companies/${randomFiscalCode()}/report`), // 404 not_found
      await get(customer.key, '/companies/not-a-code/credit-report'), // 422
      await get(customer.key, `/companies/${BROKEN}/profile`), // 502
      await get(customer.key, '/companies/x/nowhere'), // 404 unknown_endpoint
      await get('sk_live_00000000000000000000000000000000', `/companies/${company.fiscalCode}/report`), // 401
    ];
    const throttled = await Promise.all(Array.from({ length: 5 }, () => get(slow.key, `/companies/${company.fiscalCode}/profile`)));
    expect(results.slice(10).map((r) => r.status)).toEqual([404, 422, 502, 404, 401]);
    expect(throttled.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(3);

    const served = results.filter((r) => r.status === 200);
    expect(served).toHaveLength(10);
    await waitFor('ledger rows of the 2xx', async () => (await ledgerIds(customer.organizationId)).size >= 10);
    const servedSlow = throttled.filter((r) => r.status === 200);
    await waitFor('ledger rows of the throttled org', async () => (await ledgerIds(slow.organizationId)).size >= servedSlow.length);
    // One more 2xx, applied after everything above: nothing else may have been charged meanwhile.
    const last = await get(customer.key, `/companies/${company.fiscalCode}/report`);
    await waitFor('the last call', async () => (await ledgerIds(customer.organizationId)).has(last.requestId));
    expect(await ledgerIds(customer.organizationId)).toEqual(new Set([...served, last].map((r) => r.requestId)));
    expect(await ledgerIds(slow.organizationId)).toEqual(new Set(servedSlow.map((r) => r.requestId)));
    expect(await allowanceOf(db, customer.organizationId)).toMatchObject({ credits_balance: 10_000 - 6 * 5, calls_used: 5 });
  });

  it('when the worker sets credits_exhausted then the API refuses credits-priced calls (402) within a second, and a top-up lets them through again', async () => {
    const customer = await newCustomer({ credits: 12 });
    const path = `/companies/${company.fiscalCode}/financials`;
    expect((await get(customer.key, path)).status).toBe(200); // 7 left
    expect((await get(customer.key, path)).status).toBe(200); // 2 left: below the cheapest credits call (5)
    await waitFor('the flag', async () => (await allowanceOf(db, customer.organizationId))?.credits_exhausted === true);
    const flagged = Date.now();
    const refused = await waitFor('a 402', async () => {
      const r = await get(customer.key, path);
      return r.status === 402 ? r : undefined;
    }, 5_000);
    expect(Date.now() - flagged).toBeLessThan(1_000);
    expect(refused.code).toBe('credits_exhausted');
    expect((await get(customer.key, `/companies/${company.fiscalCode}/report`)).status).toBe(200); // calls-priced: not blocked

    await changeCredits(db, { organizationId: customer.organizationId, kind: 'top_up', credits: 100, actor: 'test', reason: 'paid' });
    const toppedUp = Date.now();
    await waitFor('served again', async () => (await get(customer.key, path)).status === 200, 5_000);
    expect(Date.now() - toppedUp).toBeLessThan(1_000);
  });

  it('when the calls cap is used up then calls-priced calls get 429 limit_reached with Retry-After, credits-priced ones still pass', async () => {
    const customer = await newCustomer({ credits: 1_000, callsCap: 3 });
    for (let i = 0; i < 3; i++) expect((await get(customer.key, `/companies/${company.fiscalCode}/report`)).status).toBe(200);
    await waitFor('the flag', async () => (await allowanceOf(db, customer.organizationId))?.limit_reached === true);
    const refused = await waitFor('a 429', async () => {
      const r = await get(customer.key, `/companies/${company.fiscalCode}/report`);
      return r.status === 429 ? r : undefined;
    }, 5_000);
    expect(refused.code).toBe('limit_reached');
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect((await get(customer.key, `/companies/${company.fiscalCode}/profile`)).status).toBe(200);
  });

  it('when everything is applied then the ledger reconciles for every organization', async () => {
    await waitFor('bus drained', async () => bus === 'kafka' || Number((await db('usage_bus_batches').count<{ n: string }>({ n: '*' }).first())?.n) === 0);
    await new Promise((r) => setTimeout(r, 500));
    expect((await reconcileLedger(db)).differences).toEqual([]);
  });
});
