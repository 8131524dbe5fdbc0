import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

// The three HTTP services run alone, as production runs them, stopped as a supervisor stops
// them: SIGTERM, a drain, then the signal re-raised (exit 143 in a shell). Before, the last log
// line was "shutting down" whether the drain finished or the process was killed half way.
const repoRoot = fileURLToPath(new URL('../', import.meta.url));

const services = [
  { entry: 'api/main.ts', listening: 'API listening' },
  { entry: 'mcp/main.ts', listening: 'tool server listening' },
  { entry: 'dashboard/main.ts', listening: 'dashboard listening' },
] as const;

interface LogLine {
  level?: string;
  msg?: string;
  signal?: string;
  drainMs?: unknown;
  port?: number;
  url?: string;
}

let dataDir: string;
let database: ScratchDatabase;
beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'service-shutdown-'));
  database = await createScratchDatabase('service_shutdown');
});
afterAll(async () => {
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

function logLines(stderr: string): LogLine[] {
  return stderr.split('\n').flatMap((line) => {
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

describe('a service stopped with SIGTERM', () => {
  it.each(services)('when $entry has drained then its last log line is "stopped" with how long the drain took, and it ends by the signal', async (service) => {
    const child = spawn(process.execPath, ['--import', 'tsx', service.entry], {
      cwd: repoRoot,
      env: { ...process.env, KAFKA_BROKERS: '', REDIS_URL: '', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', API_PORT: '0', MCP_PORT: '0', DASHBOARD_PORT: '0', DATABASE_URL: database.url },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.resume();
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      const until = Date.now() + 45_000;
      let listening: LogLine | undefined;
      while (!(listening = logLines(stderr).find((l) => l.msg === service.listening)) && Date.now() < until && child.exitCode === null) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(listening, stderr.slice(-2000)).toBeDefined();
      const baseUrl = listening!.url ? new URL(listening!.url).origin : `http://127.0.0.1:${listening!.port}`;
      // A request served on a kept-alive connection: the drain has one to close.
      expect((await fetch(`${baseUrl}/healthz`)).status).toBe(200);

      child.kill('SIGTERM');
      // Re-raised after the drain: the process ends by the signal, as a shell's 143, not exit 0.
      expect(await exited).toEqual({ code: null, signal: 'SIGTERM' });
      const lines = logLines(stderr);
      const last = lines.at(-1);
      expect(last, stderr.slice(-2000)).toEqual(expect.objectContaining({ level: 'info', msg: 'stopped', signal: 'SIGTERM', drainMs: expect.any(Number) }));
      expect(last!.drainMs as number).toBeGreaterThanOrEqual(0);
      expect(last!.drainMs as number).toBeLessThan(10_000);
      expect(lines.at(-2)).toEqual(expect.objectContaining({ msg: 'shutting down', signal: 'SIGTERM' }));
      expect(lines.filter((l) => l.msg === 'unclean shutdown')).toEqual([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 60_000);

  it('when the drain fails then the last line is "unclean shutdown" and the process exits with status 1, not by the signal', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/support/stop-that-fails.ts'], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
    try {
      await new Promise<void>((resolve) => child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve()));
      child.kill('SIGTERM');
      expect(await exited).toEqual({ code: 1, signal: null });
      const lines = logLines(stderr);
      expect(lines.at(-1), stderr.slice(-2000)).toEqual(expect.objectContaining({ level: 'error', msg: 'unclean shutdown' }));
      expect(lines.filter((l) => l.msg === 'stopped')).toEqual([]);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  }, 30_000);
});
