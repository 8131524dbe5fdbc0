import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { withClient } from './services/databases.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// The four services run alone, as production runs them, when start-up fails: one JSON log line
// saying what to change, then exit code 1, as `npm start` does (cli/commands/start). Before,
// each crashed with Node's uncaught-error dump, and one whose port was taken left its pool open.
const repoRoot = fileURLToPath(new URL('../', import.meta.url));
// Longer than a start-up takes here, far shorter than a hung process would last.
const GIVE_UP_MS = 45_000;
// From the error line to the process's end. No process.exit() is called on this path: the
// process only ends once its pool, listeners and timers are closed, so ending promptly is the
// sign that what it opened was closed.
const PROMPT_MS = 5_000;

const services = [
  { entry: 'api/main.ts', portVariable: 'API_PORT' },
  { entry: 'mcp/main.ts', portVariable: 'MCP_PORT' },
  { entry: 'dashboard/main.ts', portVariable: 'DASHBOARD_PORT' },
  { entry: 'billing-worker/main.ts', portVariable: undefined },
] as const;
const httpServices = services.filter((s) => s.portVariable !== undefined);
// The services that publish usage events: with KAFKA_BROKERS set, to Kafka.
const kafkaProducers = httpServices.filter((s) => s.entry !== 'dashboard/main.ts');
// Empty when the run was started with TEST_SERVICES=postgres.
const kafkaBrokers = inject('kafkaBrokers');

interface ServiceRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  /** The `msg` of every JSON log line at level error. */
  errors: string[];
  /** From the first error log line to the process's exit; undefined without one. */
  exitAfterErrorMs: number | undefined;
}

let dataDir: string;

/** A service's main.ts in a child process, on free ports, without Kafka or Redis unless `env` names them. */
const spawnService = (entry: string, env: Record<string, string>) =>
  spawn(process.execPath, ['--import', 'tsx', entry], {
    cwd: repoRoot,
    env: { ...process.env, KAFKA_BROKERS: '', REDIS_URL: '', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', API_PORT: '0', MCP_PORT: '0', DASHBOARD_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });

/** One service's main.ts, as `node dist/<service>/main.js` runs it, killed after GIVE_UP_MS. */
function runService(entry: string, env: Record<string, string>): Promise<ServiceRun> {
  return new Promise((resolve, reject) => {
    const child = spawnService(entry, env);
    let output = '';
    let errorAt: number | undefined;
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (errorAt === undefined && errorsIn(output).length > 0) errorAt = Date.now();
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const giveUp = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(giveUp);
      resolve({ code, signal, output, errors: errorsIn(output), exitAfterErrorMs: errorAt === undefined ? undefined : Date.now() - errorAt });
    });
  });
}

function logLines(output: string): { level?: unknown; msg?: unknown }[] {
  return output.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as { level?: unknown; msg?: unknown }];
    } catch {
      return [];
    }
  });
}

/** One service started until it says it listens, then stopped with SIGTERM: its log lines. */
function startAndStop(entry: string, env: Record<string, string>): Promise<{ code: number | null; lines: { level?: unknown; msg?: unknown }[]; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnService(entry, env);
    let output = '';
    let stopping = false;
    const collect = (chunk: Buffer) => {
      output += chunk.toString();
      if (!stopping && /listening/.test(output)) {
        stopping = true;
        child.kill('SIGTERM');
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const giveUp = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(giveUp);
      resolve({ code, lines: logLines(output), output });
    });
  });
}

function errorsIn(output: string): string[] {
  return output.split('\n').flatMap((line) => {
    try {
      const entry = JSON.parse(line) as { level?: unknown; msg?: unknown };
      return entry.level === 'error' ? [String(entry.msg)] : [];
    } catch {
      return [];
    }
  });
}

/** Exit code 1, promptly, with `line` as the only error and no stack anywhere. */
function expectOneClearFailure(run: ServiceRun, line: string | RegExp): void {
  const tail = run.output.slice(-3000);
  expect({ code: run.code, signal: run.signal }, tail).toEqual({ code: 1, signal: null });
  expect(run.errors, tail).toEqual([typeof line === 'string' ? line : expect.stringMatching(line)]);
  expect(run.exitAfterErrorMs, tail).toBeLessThan(PROMPT_MS);
  // Neither Node's uncaught-error dump nor a stack in a log line.
  expect(run.output).not.toMatch(/Node\.js v\d/);
  expect(run.output).not.toMatch(/\n\s+at |\\n\s+at /);
}

/** A port held the way another process holds it. */
async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

let database: ScratchDatabase;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'services-start-failure-'));
  // The first service to start migrates it; the dashboard's first operator lands here too.
  database = await createScratchDatabase('services_start');
});
afterAll(async () => {
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('a service run alone when start-up fails', () => {
  it.each(services)('when the database does not answer then $entry says where and which setting to check, and exits 1', async ({ entry }) => {
    const run = await runService(entry, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x' });
    expectOneClearFailure(run, 'could not start: cannot reach the database at 127.0.0.1:1 (connection refused); check DATABASE_URL');
  });

  it.each(httpServices)('when $portVariable is taken then $entry names the port and the variable, closes what it opened and exits 1', async ({ entry, portVariable }) => {
    const held = await holdPort();
    try {
      const run = await runService(entry, { DATABASE_URL: database.url, [portVariable]: String(held.port) });
      expectOneClearFailure(run, `could not start: ${portVariable} ${held.port} is already in use on 127.0.0.1: stop what listens there, or set ${portVariable} to a free port`);
    } finally {
      await held.release();
    }
  });

  it.each(services)('when a variable is invalid then $entry says which and the value given, as parseConfig words it, and exits 1', async ({ entry }) => {
    // A port in hex listened on 8080 before; a word read "expected number, received NaN".
    const run = await runService(entry, { DATABASE_URL: 'postgres://postgres@127.0.0.1:1/x', DATABASE_POOL_MAX: 'many', API_PORT: '0x1F90' });
    expectOneClearFailure(run, 'could not start: Invalid configuration:\n'
      + '  - DATABASE_POOL_MAX: must be a whole number in decimal digits, got many\n'
      + '  - API_PORT: must be a whole number in decimal digits, got 0x1F90');
  });

  it.each(services)('when HOST is no address and no name that resolves then $entry says HOST, not only getaddrinfo ENOTFOUND, and exits 1', async ({ entry }) => {
    const run = await runService(entry, { DATABASE_URL: database.url, HOST: '999.1.1.1', BILLING_WORKER_PORT: '0' });
    // ENOTFOUND where a name server answers; a machine without one cannot look it up at all.
    expectOneClearFailure(run, /^could not start: HOST 999\.1\.1\.1 (is neither an IP address nor a name that resolves here|could not be looked up \(.+\)): set HOST to an address of this machine, or 127\.0\.0\.1$/);
  });

  it.each(services)('when NODE_ENV is production without DATABASE_URL then $entry refuses to start a database of its own, and exits 1', async ({ entry }) => {
    const run = await runService(entry, { NODE_ENV: 'production', DATABASE_URL: '', RATE_LIMIT_STORE: 'memory', USAGE_BUS: 'postgres' });
    expectOneClearFailure(run, 'could not start: Invalid configuration:\n  - DATABASE_URL is required when NODE_ENV is production: the embedded PostgreSQL is for running on one machine (npm start, tests)');
  });

  it.each(services)('when MIGRATE_ON_START is off and the schema is behind this release then $entry names the first migration missing and the command to run, and exits 1', async ({ entry }) => {
    const empty = await createScratchDatabase('services_unmigrated');
    try {
      const run = await runService(entry, { DATABASE_URL: empty.url, MIGRATE_ON_START: 'false' });
      expectOneClearFailure(run, new RegExp('^could not start: The database schema is behind this release: \\d+ migrations not applied, the first 20\\d{6}_001_\\w+\\. Run `cli migrate up` .*or set MIGRATE_ON_START=true$'));
      // Only read: no table made in the database it refused.
      const tables = await withClient(empty.url, async (client) => (await client.query("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).rows);
      expect(tables).toEqual([]);
    } finally {
      await empty.drop();
    }
  });

  // The three that publish or read usage events: in production, a forgotten or misspelt
  // KAFKA_BROKERS would put one process on the Postgres bus, never read by the others on Kafka.
  const usageBusProcesses = services.filter((s) => s.entry !== 'dashboard/main.ts');
  it.each(usageBusProcesses)('when NODE_ENV is production without KAFKA_BROKERS then $entry refuses to use the Postgres bus unless USAGE_BUS=postgres asks for it, and exits 1', async ({ entry }) => {
    const run = await runService(entry, { NODE_ENV: 'production', DATABASE_URL: database.url, KAFKA_BROKER: '127.0.0.1:9092', RATE_LIMIT_STORE: 'memory' });
    expectOneClearFailure(run, 'could not start: Invalid configuration:\n  - KAFKA_BROKERS: required when NODE_ENV is production, where usage events go through Kafka; or set USAGE_BUS=postgres to use the Postgres usage bus instead (every API, tool server and billing worker of the deployment must then use it)');
  });

  // The two that count rate limits: in production, a forgotten or misspelt REDIS_URL would have
  // each replica count on its own, allowing N times each limit, with nothing said.
  const rateLimited = services.filter((s) => s.entry === 'api/main.ts' || s.entry === 'mcp/main.ts');
  it.each(rateLimited)('when NODE_ENV is production without REDIS_URL then $entry refuses to count rate limits in process unless RATE_LIMIT_STORE=memory asks for it, warns of the misspelt name, and exits 1', async ({ entry }) => {
    const run = await runService(entry, { NODE_ENV: 'production', DATABASE_URL: database.url, USAGE_BUS: 'postgres', REDIS_URI: 'redis://127.0.0.1:6379' });
    expectOneClearFailure(run, 'could not start: Invalid configuration:\n  - REDIS_URL: required when NODE_ENV is production, where every API and tool server counts rate limits in one Redis; or set RATE_LIMIT_STORE=memory to count them in each process instead (N processes then allow N times each limit)');
    expect(logLines(run.output).filter((l) => l.level === 'warn').map((l) => l.msg)).toEqual(['REDIS_URI is not a setting of this service and is ignored: did you mean REDIS_URL?']);
  });

  it('when KAFKA_BROKERS names no broker then the billing worker names it and the variable, without kafkajs stacks, and exits 1', async () => {
    const run = await runService('billing-worker/main.ts', { DATABASE_URL: database.url, KAFKA_BROKERS: '127.0.0.1:1' });
    expectOneClearFailure(run, 'could not start: cannot reach Kafka at 127.0.0.1:1 (connection refused); check KAFKA_BROKERS');
    // kafkajs's retries before that line: each kind said once, not once per attempt (about 12 before).
    const warnings = run.output.split('\n').filter((line) => line.includes('"level":"warn"') && line.includes('"component":"kafkajs"'));
    expect(warnings.length, warnings.join('\n')).toBeLessThanOrEqual(3);
  });

  it.skipIf(!kafkaBrokers).each(kafkaProducers)(
    'when $portVariable is taken and KAFKA_BROKERS is set then $entry closes its Kafka producer too and exits 1 promptly',
    async ({ entry, portVariable }) => {
      const held = await holdPort();
      try {
        const run = await runService(entry, { DATABASE_URL: database.url, KAFKA_BROKERS: kafkaBrokers, [portVariable]: String(held.port) });
        expectOneClearFailure(run, `could not start: ${portVariable} ${held.port} is already in use on 127.0.0.1: stop what listens there, or set ${portVariable} to a free port`);
      } finally {
        await held.release();
      }
    },
  );
});

describe('a service run alone when it starts', () => {
  const rateLimited = services.filter((s) => s.entry === 'api/main.ts' || s.entry === 'mcp/main.ts');
  it.each(rateLimited)('when REDIS_URL is set then $entry says once that rate limits are shared through that Redis, by host and port alone', async ({ entry }) => {
    const run = await startAndStop(entry, { DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:6379/0', REDIS_KEY_PREFIX: 'start-test:' });
    const said = run.lines.filter((l) => String(l.msg).startsWith('rate limits:')).map((l) => [l.level, l.msg]);
    expect(said, run.output.slice(-3000)).toEqual([['info', 'rate limits: shared through Redis at 127.0.0.1:6379 (prefix start-test:)']]);
  });

  it.each(rateLimited)('when NODE_ENV is production and RATE_LIMIT_STORE=memory asks for it then $entry starts, saying once that rate limits are counted in this process only', async ({ entry }) => {
    const run = await startAndStop(entry, { NODE_ENV: 'production', DATABASE_URL: database.url, USAGE_BUS: 'postgres', RATE_LIMIT_STORE: 'memory' });
    const said = run.lines.filter((l) => String(l.msg).startsWith('rate limits:')).map((l) => [l.level, l.msg]);
    expect(said, run.output.slice(-3000)).toEqual([['info', 'rate limits: in this process only']]);
    expect(run.lines.filter((l) => l.level === 'error'), run.output.slice(-3000)).toEqual([]);
  });
});
