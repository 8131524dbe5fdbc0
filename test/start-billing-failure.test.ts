// `npm start` runs the billing worker in-process beside the API and the tool server. When that
// worker's consumer stops for good, the one process must not go on serving paid calls that are
// never billed: it stops everything and exits 1, saying why. Before, it kept serving, and no
// balance or flag moved again. Kafka runs on the suite's real broker.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../adapters/kafka/index.js';
import { createDb } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { freePort, isListening } from './services/free-port.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { kafkaBrokers, topicsWithAnUnrestartableCrash } from './support/kafka.js';
import { hostAndPort, startTcpProxy } from './support/tcp-proxy.js';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const logger = createLogger({ level: 'silent' });
const START_MS = 90_000;

let dir: string;
let database: ScratchDatabase;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'start-billing-failure-'));
  database = await createScratchDatabase('start_billing_failure');
});
afterAll(async () => {
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function waitUntil(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

/**
 * `npm start` (from source, as `.ci/run` has no dist/) on free ports with `env` over the
 * defaults, its output kept; resolves once its three ports listen.
 */
async function startNpmStart(env: Record<string, string>) {
  const ports = { API_PORT: await freePort(), MCP_PORT: await freePort(), DASHBOARD_PORT: await freePort() };
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'start'], {
    cwd: repoRoot,
    env: { ...process.env, REDIS_URL: '', SAMPLE_COMPANIES: '20', LOG_LEVEL: 'info', ...env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk: Buffer) => (out.stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out.stderr += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
  const started = {
    ports,
    out,
    exited,
    tail: () => (out.stdout + out.stderr).slice(-3000),
    signal: (signal: NodeJS.Signals) => child.kill(signal),
    kill: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
  const allUp = () => Promise.all(Object.values(ports).map((port) => isListening(port))).then((up) => up.every(Boolean));
  if (!(await waitUntil(allUp, START_MS))) {
    started.kill();
    throw new Error(`npm start did not listen within ${START_MS / 1000} s: ${started.tail()}`);
  }
  return started;
}

describe('npm start when its billing worker stops consuming for good', () => {
  it('when kafkajs will not restart the consumer then start stops every service, closes its ports and exits 1 with one line saying why', async () => {
    // As in test/billing-worker-process.test.ts: a dead-letter topic that refuses every dead
    // letter as too large, even a truncated stand-in, is a crash kafkajs does not restart from.
    const kafka = createKafka({ brokers: kafkaBrokers(), clientId: 'start-billing-failure', logger });
    const { topic, deadLetterTopic, groupId, poison } = await topicsWithAnUnrestartableCrash(kafka, 'usage-events-start');

    const start = await startNpmStart({
      DATABASE_URL: database.url,
      DATA_DIR: dir,
      KAFKA_BROKERS: kafkaBrokers().join(','),
      KAFKA_USAGE_TOPIC: topic,
      KAFKA_DEAD_LETTER_TOPIC: deadLetterTopic,
      KAFKA_CONSUMER_GROUP: groupId,
    });
    try {
      await poison();

      const ended = await Promise.race([start.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 60_000))]);
      expect(ended, start.tail()).toEqual({ code: 1, signal: null });
      expect(start.out.stderr.split('\n').filter((line) => line.startsWith('error: '))).toEqual([
        expect.stringMatching(
          /^error: the billing worker stopped consuming usage events: the Kafka consumer crashed on an error kafkajs does not retry, and kafkajs will not restart it \(KafkaJSProtocolError: The request included a message larger than the max message size the server will accept\)\. Everything was stopped rather than serve calls that would never be billed; run npm start again$/,
        ),
      ]);
      expect(start.out.stdout).toContain('the billing worker stopped consuming usage events: stopping…');
      const anyUp = () => Promise.all(Object.values(start.ports).map((port) => isListening(port))).then((up) => up.some(Boolean));
      expect(await anyUp()).toBe(false);
    } finally {
      start.kill();
    }
  }, START_MS + 90_000);
});

describe('npm start when its billing worker stalls on a database that stopped answering', () => {
  const STALL_MS = 2_000;
  // cli/commands/start/index.ts's FAILED_STOP_MS.
  const FAILED_STOP_MS = 15_000;

  /** `npm start` over a TCP proxy to a database of its own, whose billing worker is then made to stall, for `check`. */
  async function whenStalled(check: (start: Awaited<ReturnType<typeof startNpmStart>>) => Promise<void>): Promise<void> {
    const stallDir = await mkdtemp(path.join(os.tmpdir(), 'start-billing-stall-'));
    const scratch = await createScratchDatabase('start_billing_stall');
    const proxy = await startTcpProxy(hostAndPort(scratch.url));
    const db = createDb({ connectionString: scratch.url, poolMax: 2, applicationName: 'start-billing-stall-test' });
    let start: Awaited<ReturnType<typeof startNpmStart>> | undefined;
    try {
      start = await startNpmStart({ DATABASE_URL: proxy.urlFor(scratch.url), DATA_DIR: stallDir, KAFKA_BROKERS: '', BILLING_BATCH_STALL_MS: String(STALL_MS) });
      const demo = JSON.parse(await readFile(path.join(stallDir, 'demo.json'), 'utf8')) as { apiKey: string; organizationId: string; baseUrl: string; sampleFiscalCodes: string[] };
      const call = async () => {
        const res = await fetch(`${demo.baseUrl}/companies/${demo.sampleFiscalCodes[0]}/financials`, { headers: { authorization: `Bearer ${demo.apiKey}` } });
        expect(res.status).toBe(200);
      };
      const charged = async () => Number((await db('usage_ledger').where({ organization_id: demo.organizationId, entry_type: 'usage' }).count<{ n: string }[]>({ n: '*' }))[0]!.n);
      await call();
      expect(await waitUntil(async () => (await charged()) === 1, 20_000)).toBe(true);

      // As in test/billing-worker-process.test.ts: the next batch waits for a lock on the
      // allowance, the connection freezes meanwhile, and the rows the lock lets through never arrive.
      const trx = await db.transaction();
      try {
        await trx('allowances').where({ organization_id: demo.organizationId }).forUpdate().first();
        await call();
        const waiting = async () => (await db.raw<{ rows: unknown[] }>("SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'start' AND wait_event_type = 'Lock'")).rows.length > 0;
        expect(await waitUntil(waiting, 20_000)).toBe(true);
        proxy.freeze();
      } finally {
        await trx.commit();
      }
      await check(start);
    } finally {
      start?.kill();
      await proxy.close();
      await db.destroy();
      await scratch.drop();
      await rm(stallDir, { recursive: true, force: true });
    }
  }

  it('then it stops what it can and, the stalled batch never draining, exits 1 within its stop deadline with one line saying why', () =>
    whenStalled(async (start) => {
      const ended = await Promise.race([start.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), STALL_MS + FAILED_STOP_MS + 20_000))]);
      expect(ended, start.tail()).toEqual({ code: 1, signal: null });
      expect(start.out.stdout).toContain('the billing worker stopped consuming usage events: stopping… (Ctrl-C quits at once)');
      expect(start.out.stderr.split('\n').filter((line) => line.startsWith('error: ')), start.tail()).toEqual([
        expect.stringMatching(
          /^error: the billing worker stopped consuming usage events: a usage batch has been in flight \d+ s \(BILLING_BATCH_STALL_MS allows 2 s\): likely a database connection that stopped answering\. Everything was being stopped rather than serve calls that would never be billed, and the stop had not finished after 15 s, so the process ends; run npm start again$/,
        ),
      ]);
    }), START_MS + 90_000);

  it('when Ctrl-C comes while that stop waits for the stalled batch then start quits at once, ending by SIGINT', () =>
    whenStalled(async (start) => {
      const stopping = () => Promise.resolve(start.out.stdout.includes('the billing worker stopped consuming usage events: stopping…'));
      expect(await waitUntil(stopping, STALL_MS + 20_000), start.tail()).toBe(true);
      start.signal('SIGINT');
      // Far sooner than the stop deadline it would otherwise wait for.
      const ended = await Promise.race([start.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5_000))]);
      expect(ended, start.tail()).toEqual({ code: null, signal: 'SIGINT' });
      expect(start.out.stdout).toContain('\nSIGINT: quitting at once, without waiting for calls in flight\n');
      expect(start.out.stderr, start.tail()).not.toMatch(/^error: /m);
      const anyUp = () => Promise.all(Object.values(start.ports).map((port) => isListening(port))).then((up) => up.some(Boolean));
      expect(await anyUp()).toBe(false);
    }), START_MS + 90_000);
});
