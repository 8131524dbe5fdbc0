import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isListening } from './services/free-port.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// The README's `npm start`, run as written (npm, its script, the build), stopped the way a
// supervisor or a script's `kill $!` stops it: SIGTERM to npm's own process. Before, the script
// ran node under a shell that did not pass the signal on: npm and the shell ended, and the
// service, its ports and its database kept running, orphaned.
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
afterAll(async () => {
  await database?.drop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return false;
}

describe('npm start', () => {
  it('when npm\'s own process is sent SIGTERM then the service stops cleanly, closing every port it opened', async () => {
    const ports = { API_PORT: await freePort(), MCP_PORT: await freePort(), DASHBOARD_PORT: await freePort() };
    const npm = spawn('npm', ['start'], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: database.url, DATA_DIR: dir, KAFKA_BROKERS: '', REDIS_URL: '', SAMPLE_COMPANIES: '20', LOG_LEVEL: 'info', ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, so whatever is left running can be cleared up below.
      detached: true,
    });
    let output = '';
    npm.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => npm.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      const allUp = () => Promise.all(Object.values(ports).map((port) => isListening(port))).then((up) => up.every(Boolean));
      expect(await waitFor(allUp, START_MS), output.slice(-3000)).toBe(true);

      // To npm alone, not its group (a terminal's Ctrl-C signals the whole group, which always worked).
      npm.kill('SIGTERM');
      await exited;
      const anyUp = () => Promise.all(Object.values(ports).map((port) => isListening(port))).then((up) => up.some(Boolean));
      expect(await waitFor(async () => !(await anyUp()), STOP_MS), output.slice(-3000)).toBe(true);
      expect(output).toContain('stopped cleanly');
    } finally {
      try {
        process.kill(-npm.pid!, 'SIGKILL');
      } catch {
        // the group has ended
      }
    }
  }, START_MS + STOP_MS + 30_000);
});
