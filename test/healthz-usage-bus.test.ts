import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// /healthz of the services that publish usage to Kafka, run alone as production runs them.
// Before, a process whose KAFKA_BROKERS named no broker answered 200 ok to every health check
// while refusing every paid call with 503: a rollout of a misconfigured replica went through.
const repoRoot = fileURLToPath(new URL('../', import.meta.url));
// Empty when the run was started with TEST_SERVICES=postgres.
const kafkaBrokers = inject('kafkaBrokers');

const services = [
  { entry: 'api/main.ts', listening: 'API listening' },
  { entry: 'mcp/main.ts', listening: 'tool server listening' },
] as const;

interface Running {
  child: ChildProcess;
  baseUrl: string;
}

const running: ChildProcess[] = [];
let database: ScratchDatabase;

/** `entry` on a free port; resolves with its base URL once it logs that it listens. */
function startService(service: (typeof services)[number], env: Record<string, string>): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', service.entry], {
    cwd: repoRoot,
    env: { ...process.env, REDIS_URL: '', HOST: '127.0.0.1', LOG_LEVEL: 'info', API_PORT: '0', MCP_PORT: '0', DATABASE_URL: database.url, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  return new Promise((resolve, reject) => {
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      for (const line of output.split('\n')) {
        if (!line.includes(service.listening)) continue;
        const entry = JSON.parse(line) as { port?: number; url?: string };
        resolve({ child, baseUrl: entry.url ? new URL(entry.url).origin : `http://127.0.0.1:${entry.port}` });
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${service.entry} exited with ${code}:\n${output.slice(-2000)}`)));
  });
}

async function health(baseUrl: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}/healthz`);
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  database = await createScratchDatabase('healthz_bus');
});
afterEach(async () => {
  await Promise.all(
    running.splice(0).map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGKILL');
        }),
    ),
  );
});
afterAll(async () => {
  await database?.drop();
});

describe('/healthz of a service publishing usage to Kafka', () => {
  it.each(services)('when KAFKA_BROKERS names no broker then $entry answers 503 naming the usage bus, the database ok', async (service) => {
    const { baseUrl } = await startService(service, { KAFKA_BROKERS: '127.0.0.1:1' });
    // Twice, a second apart: not a start-up moment but what it says as long as Kafka is gone.
    for (let i = 0; i < 2; i++) {
      expect(await health(baseUrl)).toEqual({ status: 503, body: { status: 'unavailable', checks: { database: 'ok', usageBus: 'unreachable' } } });
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  });

  it.skipIf(!kafkaBrokers).each(services)('when KAFKA_BROKERS names a broker that answers then $entry answers 200 ok once its producer is connected', async (service) => {
    const { baseUrl } = await startService(service, { KAFKA_BROKERS: kafkaBrokers!, KAFKA_USAGE_TOPIC: `healthz-${Date.now()}` });
    const until = Date.now() + 30_000;
    let last = await health(baseUrl);
    while (last.status !== 200 && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      last = await health(baseUrl);
    }
    expect(last).toEqual({ status: 200, body: { status: 'ok' } });
  });
});
