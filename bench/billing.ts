// npm run bench:billing — the billing pipeline's figures on this machine:
//   1. events/s the worker applies: 200,000 pre-produced events, time to drain (both buses);
//   2. API throughput with Kafka publishing vs the Postgres bus vs no usage at all (same run);
//   3. end-to-end lag (response sent → ledger row committed), p50/p99, at a steady 1,000 calls/s;
//   4. the overspend window: how far past zero a balance goes under full load before the flag bites.
// Services: DATABASE_URL / KAFKA_BROKERS when set, otherwise started here as the tests do.
// BENCH_EVENTS (200000), BENCH_SECONDS (10), BENCH_CONNECTIONS (50) tune it.
import { randomUUID } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { Knex } from 'knex';
import { createKafka, createKafkaUsageConsumer, createKafkaUsageSink } from '../adapters/kafka/index.js';
import { startBillingWorker } from '../billing-worker/start-billing-worker.js';
import { createDb } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageConsumer, createPostgresUsageSink, type UsageBusConsumer, type UsageEvent, type UsageSink } from '../core/usage/index.js';
import { freePort } from '../test/services/free-port.js';
import { apiProcess, COMPANY_CODE, createCustomers, insertCompany, managedProcess, percentile, startInProcessApi, startServices, waitUntil, type Customer } from '../test/fault/harness.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PARTITIONS = 6;
const logger = createLogger({ level: 'error' });
const say = (line: string) => process.stdout.write(line + '\n');
const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

const services = await startServices('bench_billing', log);
const db = createDb({ connectionString: services.databaseUrl, poolMax: 12, applicationName: 'bench-billing' });
const kafka = createKafka({ brokers: services.brokers, clientId: 'bench-billing', logger });
const suffix = randomUUID().slice(0, 8);
const results: string[] = [];
const report = (line: string) => {
  results.push(line);
  say(line);
};

try {
  await insertCompany(db);
  const orgs = await createCustomers(db, 200, 100_000_000);
  log(`seeded 200 organizations`);

  // 1. Worker apply rate.
  const event = (i: number): UsageEvent => ({
    v: 1,
    eventId: `req_${randomUUID()}`,
    organizationId: orgs[i % orgs.length]!.organizationId,
    keyId: 'key_bench',
    source: 'api',
    product: i % 3 === 0 ? 'company-report' : 'company-financials',
    quantity: i % 3 === 0 ? 1 : 5,
    unit: i % 3 === 0 ? 'calls' : 'credits',
    occurredAt: new Date().toISOString(),
  });

  {
    for (let i = 0; i < EVENTS; i += 10_000) {
      const chunk = Array.from({ length: Math.min(10_000, EVENTS - i) }, (_, j) => event(i + j));
      // As the API publishes them: batch rows of up to 500 events.
      for (let k = 0; k < chunk.length; k += 500) {
        const batch = chunk.slice(k, k + 500);
        await db('usage_bus_batches').insert({ events: JSON.stringify(batch), event_count: batch.length });
      }
    }
    const rate = await drain('postgres', createPostgresUsageConsumer({ db, connectionString: services.databaseUrl, logger, batchSize: 2_000, concurrency: 2 }));
    report(`worker apply rate, Postgres bus: ${EVENTS} events in ${rate.seconds.toFixed(2)} s = ${Math.round(rate.perSecond)} events/s`);
  }
  {
    const topic = `usage-events-bench-${suffix}`;
    const producer = kafka.producer();
    await producer.connect();
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    await admin.disconnect();
    for (let i = 0; i < EVENTS; i += 5_000) {
      const chunk = Array.from({ length: Math.min(5_000, EVENTS - i) }, (_, j) => event(i + j));
      await producer.send({ topic, acks: -1, messages: chunk.map((e) => ({ key: e.organizationId, value: JSON.stringify(e) })) });
    }
    await producer.disconnect();
    const consumer = createKafkaUsageConsumer({ kafka, db, topic, deadLetterTopic: `${topic}-dlq`, groupId: `bench-${suffix}`, partitions: PARTITIONS, logger, partitionsConsumedConcurrently: 3 });
    const rate = await drain('kafka', consumer);
    report(`worker apply rate, Kafka (${PARTITIONS} partitions): ${EVENTS} events in ${rate.seconds.toFixed(2)} s = ${Math.round(rate.perSecond)} events/s (from the first batch; ${rate.withJoin.toFixed(2)} s including the consumer-group join)`);
  }

  // 2. API throughput: the same app, three sinks, no worker running (publishing cost only).
  const customer = orgs[0]!;
  const noUsage: UsageSink = { publish: async () => {}, close: async () => {} };
  const kafkaSink = createKafkaUsageSink({ kafka, topic: `usage-events-api-${suffix}`, partitions: PARTITIONS, logger });
  await kafkaSink.connect();
  const throughput: Record<string, number> = {};
  for (const [name, sink] of [['no usage', noUsage], ['Postgres bus', createPostgresUsageSink(db, { logger })], ['Kafka', kafkaSink]] as const) {
    const api = await startInProcessApi({ db, databaseUrl: services.databaseUrl, usage: sink, logger });
    await autocannon({ url: `${api.url}/companies/${COMPANY_CODE}/financials`, connections: CONNECTIONS, duration: 2, headers: { authorization: `Bearer ${customer.key}` } }); // warm-up
    const r = await autocannon({ url: `${api.url}/companies/${COMPANY_CODE}/financials`, connections: CONNECTIONS, duration: SECONDS, headers: { authorization: `Bearer ${customer.key}` } });
    throughput[name] = r.requests.average;
    report(`API throughput, ${name}: ${Math.round(r.requests.average)} req/s (p50 ${r.latency.p50} ms, p99 ${r.latency.p99} ms, non-2xx ${r.non2xx}, errors ${r.errors})`);
    await api.close();
  }
  await db('usage_bus_batches').delete(); // not billed in this bench: the throughput runs only measure publishing

  // 3. End-to-end lag at a steady 1,000 calls/s, and 4. the overspend window, on each bus:
  // the API and the billing worker run as processes of their own, as deployed.
  const logDir = await mkdtemp(path.join(os.tmpdir(), 'bench-billing-logs-'));
  for (const bus of ['kafka', 'postgres'] as const) {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      DATABASE_URL: services.databaseUrl,
      KAFKA_BROKERS: bus === 'kafka' ? services.brokers.join(',') : '',
      KAFKA_USAGE_TOPIC: `usage-events-lag-${suffix}`,
      KAFKA_DEAD_LETTER_TOPIC: `usage-events-lag-dlq-${suffix}`,
      KAFKA_CONSUMER_GROUP: `bench-lag-${suffix}`,
      KAFKA_PARTITIONS: String(PARTITIONS),
      MIGRATE_ON_START: 'false',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      DATA_DIR: logDir,
    };
    const port = await freePort();
    const api = apiProcess(`api-${bus}`, port, env, logDir);
    const worker = managedProcess({ name: `worker-${bus}`, script: 'billing-worker/main.ts', env, logDir });
    await Promise.all([api.start(), worker.start()]);
    const url = `http://127.0.0.1:${port}`;
    // Measure from the moment the worker is consuming (a Kafka group join takes seconds).
    const probe = await fetch(`${url}/companies/${COMPANY_CODE}/financials`, { headers: { authorization: `Bearer ${orgs[1]!.key}` } });
    await probe.arrayBuffer();
    await waitUntil('the worker to consume', async () => (await db('usage_ledger').where({ event_id: probe.headers.get('x-request-id')! }).first()) !== undefined, 60_000);

    const lag = await steadyLoad(url, orgs.slice(1, 21), 1_000, SECONDS);
    report(`end-to-end lag (event → ledger row), ${bus} bus, ${lag.served} calls offered at 1,000/s: p50 ${lag.p50} ms, p99 ${lag.p99} ms (max ${lag.max} ms; ${lag.missing} not applied within 15 s)`);

    const overspend = await measureOverspend(db, url, bus);
    report(`overspend window, ${bus} bus, full load (${CONNECTIONS} connections, 5-credit calls, 1,000 credits): ${overspend.served} calls served, ${overspend.pastExhaustion} after the balance could no longer pay (${overspend.windowMs} ms), balance reached ${overspend.finalBalance} credits`);

    const [, workerExit] = await Promise.all([api.stop(), worker.stop()]);
    report(`billing worker (${bus}) on SIGTERM: exit code ${workerExit}`);
  }
  await kafkaSink.close();
  say('');
  say('summary');
  for (const line of results) say(`  ${line}`);
} finally {
  await db.destroy();
  await services.stop();
}

async function drain(bus: string, consumer: UsageBusConsumer) {
  let first = 0;
  let applied = 0;
  const began = performance.now();
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const worker = await startBillingWorker({ db, consumer, logger, onBatch: (o) => {
    if (first === 0) first = performance.now();
    applied += o.applied;
    if (applied >= EVENTS) done();
  } });
  const progress = setInterval(() => log(`${bus}: ${applied} applied`), 5_000);
  await finished;
  const end = performance.now();
  clearInterval(progress);
  await worker.stop();
  const seconds = (end - first) / 1000;
  return { seconds, perSecond: EVENTS / seconds, withJoin: (end - began) / 1000 };
}

// Lag is measured from the event's occurredAt (the API's clock, taken just before it publishes
// and then answers 2xx) to the ledger row's applied_at (the worker's clock at the insert): the
// same machine, so one clock; it over-states "response → ledger" by the publish time. The load
// generator's own receive time is not used: under load it lags the API's send by its own queue.
async function steadyLoad(url: string, customers: Customer[], perSecond: number, seconds: number) {
  const served: string[] = [];
  const calls: Promise<void>[] = [];
  const began = performance.now();
  let n = 0;
  while (performance.now() - began < seconds * 1000) {
    const due = Math.floor(((performance.now() - began) / 1000) * perSecond);
    while (n < due) {
      const c = customers[n % customers.length]!;
      n += 1;
      calls.push(
        fetch(`${url}/companies/${COMPANY_CODE}/financials`, { headers: { authorization: `Bearer ${c.key}` } }).then(async (res) => {
          await res.arrayBuffer();
          if (res.status === 200) served.push(res.headers.get('x-request-id')!);
        }, () => {}),
      );
    }
    await new Promise((r) => setTimeout(r, 5));
  }
  await Promise.all(calls);
  const lagOf = new Map<string, number>();
  const deadline = Date.now() + 15_000;
  while (lagOf.size < served.length && Date.now() < deadline) {
    const { rows } = await db.raw<{ rows: { event_id: string; lag_ms: number }[] }>(
      `SELECT event_id, (extract(epoch FROM applied_at - occurred_at) * 1000)::int AS lag_ms FROM usage_ledger WHERE event_id = ANY(?::text[])`,
      [served],
    );
    for (const r of rows) lagOf.set(r.event_id, r.lag_ms);
    if (lagOf.size < served.length) await new Promise((r) => setTimeout(r, 250));
  }
  const lags = [...lagOf.values()].sort((a, b) => a - b);
  return { served: served.length, p50: percentile(lags, 50), p99: percentile(lags, 99), max: lags[lags.length - 1] ?? NaN, missing: served.length - lags.length };
}

async function measureOverspend(db: Knex, url: string, bus: string) {
  const [victim] = await createCustomers(db, 1, 1_000, `bench_overspend_${bus}`);
  await autocannon({ url: `${url}/companies/${COMPANY_CODE}/financials`, connections: CONNECTIONS, duration: 5, headers: { authorization: `Bearer ${victim!.key}` } });
  await new Promise((r) => setTimeout(r, 3_000)); // let the worker apply the last events
  const rows = await db('usage_ledger').where({ organization_id: victim!.organizationId, entry_type: 'usage' }).orderBy('id').select<{ credits_balance_after: number; occurred_at: Date }[]>('credits_balance_after', 'occurred_at');
  // The cheapest credits call costs 5: once a balance is below 5, no call could be paid.
  const firstUnpayable = rows.findIndex((r) => r.credits_balance_after < 5);
  const past = firstUnpayable < 0 ? [] : rows.slice(firstUnpayable + 1);
  const windowMs = past.length === 0 ? 0 : past[past.length - 1]!.occurred_at.getTime() - rows[firstUnpayable]!.occurred_at.getTime();
  const final = await db('allowances').where({ organization_id: victim!.organizationId }).first<{ credits_balance: number }>('credits_balance');
  return { served: rows.length, pastExhaustion: past.length, windowMs, finalBalance: final?.credits_balance ?? NaN };
}
