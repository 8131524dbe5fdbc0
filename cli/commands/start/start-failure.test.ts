import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { withClient } from '../../../test/services/databases.js';
import { freePort, isListening } from '../../../test/services/free-port.js';
import { createScratchDatabase } from '../../../test/support/database.js';
import { runCli } from '../../../test/support/run-cli.js';
import { verifyPassword } from '../../../core/dashboard-auth/index.js';

// `start` when start-up fails part way: the parts already running are stopped, the embedded
// Postgres too, and the process ends by itself with one line saying what to change. Before,
// the worker, alert runner and key listeners kept it alive, polling a closed database.
// Also a start-up interrupted by Ctrl-C: said at once, then stopped once start-up has ended.
const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
// Longer than a start-up takes here, far shorter than a hung process would last.
const GIVE_UP_MS = 90_000;
// From the error line to the process's end: stopping what started, the embedded server too.
const PROMPT_MS = 10_000;

interface StartRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** From the first `error:` line on stderr to the process's exit; undefined without one. */
  exitAfterErrorMs: number | undefined;
}

/**
 * The real `cli start`, killed (SIGKILL: a hung one may swallow SIGTERM) after GIVE_UP_MS;
 * `interrupt`: sent SIGINT at its first log line, while it is still starting up.
 */
function runStart(env: Record<string, string>, options: { interrupt?: boolean } = {}): Promise<StartRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', 'start'], {
      cwd: repoRoot,
      env: { ...process.env, KAFKA_BROKERS: '', REDIS_URL: '', SAMPLE_COMPANIES: '20', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let errorAt: number | undefined;
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => {
      if (options.interrupt && stderr === '') child.kill('SIGINT');
      stderr += chunk.toString();
      if (errorAt === undefined && /^error: /m.test(stderr)) errorAt = Date.now();
    });
    const giveUp = setTimeout(() => child.kill('SIGKILL'), GIVE_UP_MS);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(giveUp);
      resolve({ code, signal, stdout, stderr, exitAfterErrorMs: errorAt === undefined ? undefined : Date.now() - errorAt });
    });
  });
}

/** A port held the way a first `npm start` holds it. */
async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, release: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** The error line, and no sign of parts left running against a closed database. */
function expectOneClearFailure(run: StartRun, line: RegExp): void {
  const output = run.stdout + run.stderr;
  expect({ code: run.code, signal: run.signal }, output.slice(-3000)).toEqual({ code: 1, signal: null });
  expect(run.stderr.split('\n').filter((l) => l.startsWith('error: '))).toEqual([expect.stringMatching(line)]);
  expect(run.exitAfterErrorMs, output.slice(-3000)).toBeLessThan(PROMPT_MS);
  expect(output).not.toMatch(/KnexTimeoutError|Unable to acquire a connection|failed; (the )?next (pass|sweep) retries/);
  // No stack: neither Node's uncaught-error dump nor one in a log line.
  expect(output).not.toMatch(/\n\s+at |\\n\s+at /);
}

let dir: string;
const cleanups: (() => Promise<void>)[] = [];

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'start-failure-'));
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('cli start when start-up fails', () => {
  it('when API_PORT is taken then start names the port and the variable, stops its embedded Postgres and exits 1 within seconds (and, first, warns of a misspelt variable)', async () => {
    const held = await holdPort();
    cleanups.push(held.release);
    const dataDir = path.join(dir, 'embedded');
    const pgPort = await freePort();
    const run = await runStart({
      DATABASE_URL: '',
      DATA_DIR: dataDir,
      EMBEDDED_PG_PORT: String(pgPort),
      API_PORT: String(held.port),
      MCP_PORT: '0',
      DASHBOARD_PORT: '0',
      API_PROT: '3000',
    });
    expectOneClearFailure(run, new RegExp(`^error: API_PORT ${held.port} is already in use on 127\\.0\\.0\\.1 .*set API_PORT to a free port$`));
    // npm start warns as each service run alone does (README, Configuration).
    expect(run.stderr).toContain('"msg":"API_PROT is not a setting of this service and is ignored: did you mean API_PORT?"');
    expect(run.stderr).toContain('"msg":"billing worker stopped"');
    // The embedded server is gone: its pid file removed, its port closed.
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
    expect(await isListening(pgPort)).toBe(false);
  }, 120_000);

  it('when DASHBOARD_PORT is taken, the last to open, then the API and tool server already listening are closed too and start exits 1', async () => {
    const held = await holdPort();
    cleanups.push(held.release);
    const database = await createScratchDatabase('start_port');
    cleanups.push(() => database.drop());
    const [apiPort, mcpPort] = [await freePort(), await freePort()];
    const run = await runStart({
      DATABASE_URL: database.url,
      DATA_DIR: path.join(dir, 'dashboard-port'),
      API_PORT: String(apiPort),
      MCP_PORT: String(mcpPort),
      DASHBOARD_PORT: String(held.port),
    });
    expectOneClearFailure(run, new RegExp(`^error: DASHBOARD_PORT ${held.port} is already in use on 127\\.0\\.0\\.1 `));
    expect(run.stderr).toContain('"msg":"billing worker stopped"');
  }, 120_000);

  it('when a first start fails on a taken port then the next one reuses its demo organization, key and operator password, and a lost password can be reset', async () => {
    const held = await holdPort();
    cleanups.push(held.release);
    const database = await createScratchDatabase('start_resume');
    cleanups.push(() => database.drop());
    const dataDir = path.join(dir, 'resume');
    const env = { DATABASE_URL: database.url, DATA_DIR: dataDir, API_PORT: '0', MCP_PORT: '0', DASHBOARD_PORT: String(held.port) };
    const demoFile = async () => JSON.parse(await readFile(path.join(dataDir, 'demo.json'), 'utf8')) as { apiKey: string; organizationId: string; operator: { email: string; password: string | null } };
    const demoOrganizations = () => withClient(database.url, async (client) => (await client.query("SELECT id FROM organizations WHERE name = 'Demo organization'")).rows.map((r: { id: string }) => r.id));
    const operatorHash = () => withClient(database.url, async (client) => (await client.query("SELECT password_hash FROM users WHERE email = 'operator@example.com'")).rows[0].password_hash as string);

    expectOneClearFailure(await runStart(env), /^error: DASHBOARD_PORT /);
    const first = await demoFile();
    expect(first.operator.password).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(await verifyPassword(first.operator.password!, await operatorHash())).toBe(true);
    expect(await demoOrganizations()).toEqual([first.organizationId]);

    expectOneClearFailure(await runStart(env), /^error: DASHBOARD_PORT /);
    expect(await demoFile()).toMatchObject({ apiKey: first.apiKey, organizationId: first.organizationId, operator: first.operator });
    expect(await demoOrganizations()).toEqual([first.organizationId]);

    // Changed since (the dashboard's Change password, here the CLI's reset): the kept password no
    // longer signs in, so it is not shown again.
    expect((await runCli(database.url, 'operator', 'reset-password', '--email', 'operator@example.com')).code).toBe(0);
    expectOneClearFailure(await runStart(env), /^error: DASHBOARD_PORT /);
    expect(await demoFile()).toMatchObject({ apiKey: first.apiKey, operator: { email: 'operator@example.com', password: null } });

    // demo.json gone: the same organization gets a new key, and the password cannot be shown.
    await rm(path.join(dataDir, 'demo.json'));
    const again = await runStart(env);
    expectOneClearFailure(again, /^error: DASHBOARD_PORT /);
    const third = await demoFile();
    expect(third.organizationId).toBe(first.organizationId);
    expect(third.apiKey).not.toBe(first.apiKey);
    expect(third.operator).toEqual({ email: 'operator@example.com', password: null });
    expect(await demoOrganizations()).toEqual([first.organizationId]);

    const reset = await runCli(database.url, 'operator', 'reset-password', '--email', 'Operator@Example.com');
    expect(reset.code, reset.stderr).toBe(0);
    const password = reset.stdout.trim();
    expect(password).toMatch(/^[0-9A-Za-z]{20}$/);
    expect(reset.stderr).toContain('shown only once');
    expect(await verifyPassword(password, await operatorHash())).toBe(true);
    const unknown = await runCli(database.url, 'operator', 'reset-password', '--email', 'nobody@example.com');
    expect(unknown).toMatchObject({ code: 1, stdout: '', stderr: 'error (not_found): No operator with e-mail "nobody@example.com".\n' });
  }, 240_000);

  it('when a migration fails then start says which and why, closes the database and exits 1 within seconds', async () => {
    const database = await createScratchDatabase('start_migration');
    cleanups.push(() => database.drop());
    // The first migration creates this table; finding one already there, it fails.
    await withClient(database.url, (client) => client.query('CREATE TABLE companies (id integer)'));
    const run = await runStart({
      DATABASE_URL: database.url,
      DATA_DIR: path.join(dir, 'migration'),
      API_PORT: '0',
      MCP_PORT: '0',
      DASHBOARD_PORT: '0',
    });
    expectOneClearFailure(run, /^error: migration 20261122_001_companies failed: relation "companies" already exists \[SQLSTATE 42P07\]$/);
  }, 120_000);
});

describe('cli start interrupted while starting up', () => {
  it('when Ctrl-C comes during start-up then start says at once that it will stop, shows no banner, and stops cleanly', async () => {
    const database = await createScratchDatabase('start_interrupted');
    cleanups.push(() => database.drop());
    const run = await runStart(
      { DATABASE_URL: database.url, DATA_DIR: path.join(dir, 'interrupted'), API_PORT: '0', MCP_PORT: '0', DASHBOARD_PORT: '0' },
      { interrupt: true },
    );
    expect({ code: run.code, signal: run.signal }, (run.stdout + run.stderr).slice(-3000)).toEqual({ code: 0, signal: null });
    expect(run.stdout).toBe('\nSIGINT: stopping as soon as start-up has finished… (press Ctrl-C again to quit at once)\nstopped cleanly\n');
  }, 120_000);
});
