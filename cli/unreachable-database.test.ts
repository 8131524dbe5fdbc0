import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { periodOf } from '../core/billing/billing-period.js';
import { freePort } from '../test/services/free-port.js';
import { testDb } from '../test/support/database.js';
import { runCli, runCliWithEnv } from '../test/support/run-cli.js';
import { hostAndPort, startTcpProxy } from '../test/support/tcp-proxy.js';

// What an operator sees when DATABASE_URL is wrong: one line on stderr naming the server (never
// the password), nothing on stdout, status 1. LOG_LEVEL is left unset, as an operator leaves it.
const serverUrl = new URL(inject('databaseUrl'));
const serverAt = `${serverUrl.hostname}:${serverUrl.port || '5432'}`;
const password = 's3cret-not-for-screens';
let dir: string;
let file: string;

const cli = (databaseUrl: string, ...args: string[]) => runCliWithEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: undefined }, ...args);

/** The run's server and credentials, with `change` applied. */
function variant(change: (url: URL) => void): string {
  const url = new URL(serverUrl);
  change(url);
  return url.toString();
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'cli-unreachable-'));
  file = path.join(dir, 'one.jsonl');
  await writeFile(file, '{"fiscalCode": "12345678903", "legalName": "Never Written SRL"}\n');
});
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('cli commands when the database cannot be used', () => {
  it('when nothing listens at DATABASE_URL then every command prints one line naming host and port, nothing on stdout, and exits 1', async () => {
    const port = await freePort();
    const url = `postgres://postgres:${password}@127.0.0.1:${port}/companies`;
    const commands = [
      ['org', 'list'],
      ['plan', 'list'],
      ['report', '--org', 'org_x', '--period', periodOf(new Date())],
      ['import', file, '--quiet'],
      ['reconcile'],
      ['migrate', 'status'],
    ];
    const runs = await Promise.all(commands.map((args) => cli(url, ...args)));
    for (const [i, run] of runs.entries()) {
      expect({ command: commands[i]!.join(' '), ...run }).toEqual({
        command: commands[i]!.join(' '),
        code: 1,
        stdout: '',
        stderr: `error: cannot reach the database at 127.0.0.1:${port} (connection refused); check DATABASE_URL\n`,
      });
    }
  });

  it('when the server refuses the user then the line says the sign-in failed and for whom, without the password', async () => {
    const run = await cli(variant((u) => { u.username = 'no_such_role_cli'; u.password = password; }), 'org', 'list');
    expect(run).toMatchObject({ code: 1, stdout: '' });
    // Trust authentication says the role does not exist; password authentication that it failed.
    expect(run.stderr).toMatch(new RegExp(`^error: cannot sign in to the database at ${serverAt} as no_such_role_cli \\(.*"no_such_role_cli".*\\); check DATABASE_URL\\n$`));
    expect(run.stderr).not.toContain(password);
  });

  it('when the database named does not exist then the line names it', async () => {
    const run = await cli(variant((u) => { u.pathname = '/no_such_database_cli'; }), 'plan', 'list');
    expect(run).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: cannot open the database at ${serverAt} (database "no_such_database_cli" does not exist); check DATABASE_URL\n`,
    });
  });

  it('when the host name does not resolve then the line says so', async () => {
    const run = await cli('postgres://postgres@no-such-host.invalid:5432/companies', 'org', 'list');
    expect(run).toMatchObject({ code: 1, stdout: '' });
    // NXDOMAIN, or a resolver that cannot answer at all in a sandbox.
    expect(run.stderr).toMatch(/^error: cannot reach the database at no-such-host\.invalid:5432 \(host name (not found|lookup failed)\); check DATABASE_URL\n$/);
  });

  it('when the database goes away during an import then the import stops with the same one line and status 1', async () => {
    const sample = path.join(dir, 'many.jsonl');
    expect((await runCli(inject('databaseUrl'), 'sample', 'generate', '--count', '1000', '--seed', '4711', '--out', sample)).code).toBe(0);
    const fiscalCode = (JSON.parse((await readFile(sample, 'utf8')).slice(0, 100_000).split('\n')[0]!) as { fiscalCode: string }).fiscalCode;
    const proxy = await startTcpProxy(hostAndPort(inject('databaseUrl')));
    const db = testDb({ poolMax: 1 });
    try {
      // One company per transaction: seconds of writing, and the server goes once the first is in.
      const run = cli(proxy.urlFor(inject('databaseUrl')), 'import', sample, '--batch-size', '1', '--workers', '0', '--quiet');
      for (let i = 0; !(await db('companies').where({ fiscal_code: fiscalCode }).first('id')); i++) {
        expect(i).toBeLessThan(1_000);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      proxy.cut();
      const { code, stdout, stderr } = await run;
      expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
      // The import meets either its pooled connection cut or a new one refused.
      expect(stderr).toMatch(new RegExp(`^error: cannot reach the database at 127\\.0\\.0\\.1:${proxy.port} \\((the server closed the connection|connection refused)\\); check DATABASE_URL\n$`));
    } finally {
      await proxy.close();
      await db.destroy();
    }
  });
});
