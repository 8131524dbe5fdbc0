import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isListening } from './services/free-port.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// The README's `npm start`, run as written (npm, its script, the build), stopped the way a
// supervisor or a script's `kill $!` stops it (SIGTERM to npm's own process) and the way a
// terminal's Ctrl-C does (SIGINT to the whole foreground process group). Before, the script ran
// node under a shell that did not pass the signal on: npm and the shell ended, and the service,
// its ports and its database kept running, orphaned. And a Ctrl-C reached node twice (from the
// terminal, and from npm passing it on): the copy killed node in the middle of its clean stop,
// leaving the embedded PostgreSQL running on its port and data folder.
const repoRoot = fileURLToPath(new URL('../', import.meta.url));
// The build alone takes ~20 s on two shared cores.
const START_MS = 150_000;
const STOP_MS = 20_000;

let dir: string;
let database: ScratchDatabase;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'npm-start-'));
  database = await createScratchDatabase('npm_start');
});
const children: ChildProcess[] = [];
const servers: number[] = [];
afterEach(() => {
  // Whatever a failed test left running: npm's group, and an embedded server in its own session
  // (SIGQUIT: its immediate shutdown).
  for (const [pid, signal] of [...children.splice(0).map((child) => [-child.pid!, 'SIGKILL'] as const), ...servers.splice(0).map((pid) => [pid, 'SIGQUIT'] as const)]) {
    try {
      process.kill(pid, signal);
    } catch {
      // it has ended
    }
  }
});
afterAll(async () => {
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

interface NpmStart {
  child: ChildProcess;
  ports: Record<'API_PORT' | 'MCP_PORT' | 'DASHBOARD_PORT', number>;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start` in a process group of its own (as a terminal runs it), output kept, on free ports. */
async function npmStart(env: Record<string, string>): Promise<NpmStart> {
  const ports = { API_PORT: await freePort(), MCP_PORT: await freePort(), DASHBOARD_PORT: await freePort() };
  const child = spawn('npm', ['start'], {
    cwd: repoRoot,
    env: { ...process.env, DATA_DIR: dir, KAFKA_BROKERS: '', REDIS_URL: '', SAMPLE_COMPANIES: '20', LOG_LEVEL: 'info', ...env, ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, ports, output: () => output, exited };
}

/** `npm start` on an embedded PostgreSQL of its own, up (its banner printed). */
async function npmStartEmbedded(name: string) {
  const dataDir = path.join(dir, name);
  const pgPort = await freePort();
  const run = await npmStart({ DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) });
  const up = await waitFor(() => run.output().includes('Ctrl-C stops everything') || run.child.exitCode !== null, START_MS);
  expect(up && run.child.exitCode === null, run.output().slice(-3000)).toBe(true);
  const pgPid = Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
  servers.push(pgPid);
  return { ...run, dataDir, pgPort, pgPid };
}

/** What a terminal's Ctrl-C (or a `kill -TERM -- -PGID`) does: the signal to every process of the group. */
function signalGroup(run: NpmStart, signal: NodeJS.Signals): void {
  process.kill(-run.child.pid!, signal);
}

async function exitOf(run: NpmStart) {
  const timeout = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), STOP_MS).unref());
  return Promise.race([run.exited, timeout]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Once npm has ended: its embedded server gone (pid, pid file, port), and every service port free. */
async function expectNothingLeft(run: Awaited<ReturnType<typeof npmStartEmbedded>>): Promise<void> {
  const left = {
    postgresRunning: alive(run.pgPid),
    postmasterPid: existsSync(path.join(run.dataDir, 'postgres', 'postmaster.pid')),
    postgresPort: await isListening(run.pgPort),
    servicePorts: (await Promise.all(Object.values(run.ports).map((port) => isListening(port)))).some(Boolean),
  };
  expect(left, run.output().slice(-3000)).toEqual({ postgresRunning: false, postmasterPid: false, postgresPort: false, servicePorts: false });
}

/** Running processes (Linux /proc): pid, parent pid and command line. */
async function processes(): Promise<{ pid: number; ppid: number; cmdline: string }[]> {
  const found = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [stat, cmdline] = await Promise.all([readFile(`/proc/${entry}/stat`, 'utf8').catch(() => ''), readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '')]);
    // pid (comm) state ppid …: comm may hold spaces and parentheses.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (stat) found.push({ pid: Number(entry), ppid, cmdline: cmdline.replaceAll('\0', ' ') });
  }
  return found;
}

describe('npm start', () => {
  it('when npm\'s own process is sent SIGTERM then the service stops cleanly, closing every port it opened', async () => {
    const run = await npmStart({ DATABASE_URL: database.url });
    const allUp = () => Promise.all(Object.values(run.ports).map((port) => isListening(port))).then((up) => up.every(Boolean));
    expect(await waitFor(allUp, START_MS), run.output().slice(-3000)).toBe(true);

    // To npm alone, not its group (as a supervisor or a script's `kill $!` sends it).
    run.child.kill('SIGTERM');
    await run.exited;
    const anyUp = () => Promise.all(Object.values(run.ports).map((port) => isListening(port))).then((up) => up.some(Boolean));
    expect(await waitFor(async () => !(await anyUp()), STOP_MS), run.output().slice(-3000)).toBe(true);
    expect(run.output()).toContain('stopped cleanly');
  }, START_MS + STOP_MS + 30_000);

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`when ${signal} is sent to npm's whole process group (as a terminal sends Ctrl-C) then start stops cleanly once, exits 0 and leaves neither its embedded PostgreSQL nor a port behind`, async () => {
      const run = await npmStartEmbedded(`group-${signal}`);
      signalGroup(run, signal);
      const exit = await exitOf(run);
      expect(exit, run.output().slice(-3000)).toEqual({ code: 0, signal: null });
      expect(run.output()).toContain(`\n${signal}: stopping… (${signal === 'SIGINT' ? 'press Ctrl-C' : 'send SIGTERM'} again to quit at once)\n`);
      expect(run.output()).toContain('"msg":"billing worker stopped"');
      expect(run.output()).toMatch(/\nstopped cleanly\n$/);
      expect(run.output()).not.toContain('quitting at once');
      await expectNothingLeft(run);
    }, START_MS + STOP_MS + 30_000);
  }

  it('when Ctrl-C comes again while the stop waits for a call in flight then start quits at once, stopping its embedded PostgreSQL first, and ends by SIGINT', async () => {
    const run = await npmStartEmbedded('second-ctrl-c');
    const { apiKey } = JSON.parse(await readFile(path.join(run.dataDir, 'demo.json'), 'utf8')) as { apiKey: string };
    // A tool call whose body never finishes arriving: the clean stop waits 5 s for it.
    const socket = net.connect({ host: '127.0.0.1', port: run.ports.MCP_PORT });
    socket.on('error', () => undefined);
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":"2.0",`);
    await new Promise((resolve) => setTimeout(resolve, 500));

    signalGroup(run, 'SIGINT');
    expect(await waitFor(() => run.output().includes('SIGINT: stopping…'), 5_000), run.output().slice(-3000)).toBe(true);
    // Well past the copy npm passes on, which is the same Ctrl-C; the stop still waits for the call.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(run.child.exitCode, run.output().slice(-3000)).toBe(null);
    signalGroup(run, 'SIGINT');
    const exit = await exitOf(run);
    socket.destroy();

    // npm passes on how node ended: by the signal, as a shell expects of a Ctrl-C (status 130).
    expect(exit, run.output().slice(-3000)).toEqual({ code: null, signal: 'SIGINT' });
    expect(run.output()).toContain('\nSIGINT: quitting at once, without waiting for calls in flight; stopping the embedded PostgreSQL first\n');
    // It did not wait for the drain: the worker, stopped after the servers, never was.
    expect(run.output()).not.toContain('"msg":"billing worker stopped"');
    expect(run.output()).not.toContain('stopped cleanly');
    await expectNothingLeft(run);
  }, START_MS + STOP_MS + 30_000);

  it('when Ctrl-C comes while initdb prepares a first start then start says it will stop, finishes starting up, shows no banner and stops cleanly', async () => {
    const dataDir = path.join(dir, 'first-start');
    const pgPort = await freePort();
    const run = await npmStart({ DATABASE_URL: '', DATA_DIR: dataDir, EMBEDDED_PG_PORT: String(pgPort) });
    // While initdb runs one of its steps (a child postgres): initdb only notes a signal, but the
    // child it runs dies of it, and initdb then fails and empties the data folder.
    let initdb: number | undefined;
    const inStep = async () => {
      const all = await processes();
      initdb = all.find((p) => p.cmdline.includes(`initdb --pgdata=${path.join(dataDir, 'postgres')}`))?.pid;
      return (initdb !== undefined && all.some((p) => p.ppid === initdb)) || run.child.exitCode !== null;
    };
    expect(await waitFor(inStep, START_MS) && run.child.exitCode === null, run.output().slice(-3000)).toBe(true);
    signalGroup(run, 'SIGINT');
    const exit = await exitOf(run);

    expect(exit, run.output().slice(-3000)).toEqual({ code: 0, signal: null });
    expect(run.output()).toContain('\nSIGINT: stopping as soon as start-up has finished… (press Ctrl-C again to quit at once)\n');
    expect(run.output()).not.toContain('Ctrl-C stops everything');
    expect(run.output()).toMatch(/\nstopped cleanly\n$/);
    expect(existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
    const left = {
      initdb: alive(initdb!),
      postmasterPid: existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')),
      postgresPort: await isListening(pgPort),
      servicePorts: (await Promise.all(Object.values(run.ports).map((port) => isListening(port)))).some(Boolean),
    };
    expect(left, run.output().slice(-3000)).toEqual({ initdb: false, postmasterPid: false, postgresPort: false, servicePorts: false });
  }, START_MS + STOP_MS + 30_000);
});
