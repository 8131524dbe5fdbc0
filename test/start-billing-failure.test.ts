// `npm start` runs the billing worker in-process beside the API and the tool server. When that
// worker's consumer stops for good, the one process must not go on serving paid calls that are
// never billed: it stops everything and exits 1, saying why. Before, it kept serving, and no
// balance or flag moved again. Kafka runs on the suite's real broker.
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../adapters/kafka/index.js';
import { createLogger } from '../core/logging/index.js';
import { freePort, isListening } from './services/free-port.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';
import { kafkaBrokers, topicsWithAnUnrestartableCrash } from './support/kafka.js';

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

describe('npm start when its billing worker stops consuming for good', () => {
  it('when kafkajs will not restart the consumer then start stops every service, closes its ports and exits 1 with one line saying why', async () => {
    // As in test/billing-worker-process.test.ts: a dead-letter topic that refuses every dead
    // letter as too large, even a truncated stand-in, is a crash kafkajs does not restart from.
    const kafka = createKafka({ brokers: kafkaBrokers(), clientId: 'start-billing-failure', logger });
    const { topic, deadLetterTopic, groupId, poison } = await topicsWithAnUnrestartableCrash(kafka, 'usage-events-start');

    const ports = { API_PORT: await freePort(), MCP_PORT: await freePort(), DASHBOARD_PORT: await freePort() };
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'start'], {
      cwd: repoRoot,
      env: {
        ...process.env,
        DATABASE_URL: database.url,
        DATA_DIR: dir,
        REDIS_URL: '',
        SAMPLE_COMPANIES: '20',
        LOG_LEVEL: 'info',
        KAFKA_BROKERS: kafkaBrokers().join(','),
        KAFKA_USAGE_TOPIC: topic,
        KAFKA_DEAD_LETTER_TOPIC: deadLetterTopic,
        KAFKA_CONSUMER_GROUP: groupId,
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    try {
      const allUp = () => Promise.all(Object.values(ports).map((port) => isListening(port))).then((up) => up.every(Boolean));
      expect(await waitUntil(allUp, START_MS), (stdout + stderr).slice(-3000)).toBe(true);

      await poison();

      const ended = await Promise.race([exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 60_000))]);
      expect(ended, (stdout + stderr).slice(-3000)).toEqual({ code: 1, signal: null });
      expect(stderr.split('\n').filter((line) => line.startsWith('error: '))).toEqual([
        expect.stringMatching(
          /^error: the billing worker stopped consuming usage events: the Kafka consumer crashed on an error kafkajs does not retry, and kafkajs will not restart it \(KafkaJSProtocolError: The request included a message larger than the max message size the server will accept\)\. Everything was stopped rather than serve calls that would never be billed; run npm start again$/,
        ),
      ]);
      expect(stdout).toContain('the billing worker stopped consuming usage events: stopping…');
      const anyUp = () => Promise.all(Object.values(ports).map((port) => isListening(port))).then((up) => up.some(Boolean));
      expect(await anyUp()).toBe(false);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, START_MS + 90_000);
});
