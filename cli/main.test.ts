import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { periodOf } from '../core/billing/billing-period.js';
import { runCli } from '../test/support/run-cli.js';

// The CLI's output piped into a program that stops reading early (`cli … | head -1`). runCli
// reads everything, so these runs spawn the CLI themselves and close the read end of its stdout.
const databaseUrl = inject('databaseUrl');
const repoRoot = fileURLToPath(new URL('../', import.meta.url));
let dir: string;

const cli = (...args: string[]) => runCli(databaseUrl, ...args);

/**
 * Runs the CLI with its stdout going to a reader that keeps `keepBytes` bytes and then closes
 * the pipe (0: closed before the CLI writes anything, so its first write fails with EPIPE).
 */
function runCliIntoEarlyExit(keepBytes: number, ...args: string[]): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', ...args], {
      cwd: repoRoot,
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    const closeStdout = () => child.stdout.destroy();
    if (keepBytes === 0) closeStdout();
    else {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        if (stdout.length >= keepBytes) closeStdout();
      });
    }
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

async function newOrganization(): Promise<string> {
  const created = await cli('org', 'create', '--name', `CLI pipe ${randomUUID()} SRL`);
  expect(created.code, created.stderr).toBe(0);
  return created.stdout.trim();
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cli-main-'));
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('cli output into a reader that stops early', () => {
  it('when stdout is closed before a command prints then org show and ledger export stop quietly with status 0', async () => {
    const org = await newOrganization();
    const [show, csv, json] = await Promise.all([
      runCliIntoEarlyExit(0, 'org', 'show', org),
      runCliIntoEarlyExit(0, 'ledger', 'export', '--org', org, '--period', periodOf(new Date())),
      runCliIntoEarlyExit(0, 'ledger', 'export', '--org', org, '--period', periodOf(new Date()), '--format', 'json'),
    ]);
    for (const run of [show, csv, json]) expect(run).toMatchObject({ code: 0, signal: null, stderr: '' });
  });

  it('when the reader takes the first line of a long output and leaves then the CLI stops quietly with status 0', async () => {
    // ~2 MB of JSON Lines: far more than a pipe holds, so the CLI is still writing when it goes.
    const run = await runCliIntoEarlyExit(1, 'sample', 'generate', '--count', '2000', '--seed', '7', '--out', '-');
    expect(run).toMatchObject({ code: 0, signal: null, stderr: '' });
    expect(run.stdout.length).toBeLessThan(1 << 20);
  });

  it('when an import with rejected lines cannot print its summary then it still exits with status 2', async () => {
    const file = path.join(dir, 'rejected.jsonl');
    await writeFile(file, '{"fiscalCode": "123", "legalName": "X"}\nnot json\n');
    const run = await runCliIntoEarlyExit(0, 'import', file, '--workers', '0', '--quiet');
    expect(run).toMatchObject({ code: 2, signal: null, stderr: '' });
  });
});
