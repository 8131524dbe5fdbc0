import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '..');
const cli = ['--import', 'tsx', path.join(root, 'cli/main.ts')];

// The README's story, across processes: `cli start` (what `npm start` runs) provisions sample
// data, a demo organization and key; calls with that key are served; the billing worker applies
// their usage; and `cli report` shows it. A second start reuses everything.
describe('demo flow: start → calls → report', () => {
  let database: ScratchDatabase;
  let dataDir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    database = await createScratchDatabase('demo_flow');
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'demo-flow-'));
    env = {
      ...process.env,
      DATABASE_URL: database.url,
      DATA_DIR: dataDir,
      API_PORT: '0',
      MCP_PORT: '0',
      DASHBOARD_PORT: '0',
      SAMPLE_COMPANIES: '120',
      LOG_LEVEL: 'warn',
      KAFKA_BROKERS: '',
      REDIS_URL: '',
      // Listening everywhere, as in a container: what it prints and writes are addresses to open.
      HOST: '0.0.0.0',
    };
  });

  afterAll(async () => {
    await database?.drop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('when the service starts, is called and stopped, then the report shows every served call, and a second start reuses the key', async () => {
    const first = await startService(env);
    const demo = JSON.parse(await readFile(path.join(dataDir, 'demo.json'), 'utf8')) as {
      apiKey: string; organizationId: string; baseUrl: string; mcpUrl: string; mcpEndpoint: string; dashboardUrl: string; sampleFiscalCodes: string[];
    };
    // The API's and the tool server's addresses are ones to open, not the 0.0.0.0 they listen
    // on; the dashboard's stays as it listens, which `operator reset-link` refuses to make links
    // for others from. The address an MCP client is given answers as the tool server.
    for (const url of [demo.baseUrl, demo.mcpUrl]) expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(demo.dashboardUrl).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    expect(demo.mcpEndpoint).toBe(`${demo.mcpUrl}/mcp`);
    const initialize = await fetch(demo.mcpEndpoint, {
      method: 'POST',
      headers: { Authorization: `Bearer ${demo.apiKey}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'demo-flow', version: '1.0.0' } } }),
    });
    expect(initialize.status).toBe(200);
    expect(demo.sampleFiscalCodes.length).toBeGreaterThanOrEqual(20);
    expect(demo.sampleFiscalCodes.some((c) => /^\d{11}$/.test(c))).toBe(true);
    expect(demo.sampleFiscalCodes.some((c) => /^[A-Z0-9]{16}$/.test(c))).toBe(true);

    const headers = { Authorization: `Bearer ${demo.apiKey}` };
    const code = demo.sampleFiscalCodes[0]!;
    const statuses: number[] = [];
    for (const endpoint of ['report', 'credit-report', 'profile', 'financials']) {
      statuses.push((await fetch(`${demo.baseUrl}/companies/${code.toLowerCase()}/${endpoint}`, { headers })).status);
    }
    // Neither a 404 nor a 422 is charged.
    statuses.push((await fetch(`${demo.baseUrl}/companies/00000000000/financials`, { headers })).status);
    statuses.push((await fetch(`${demo.baseUrl}/companies/12/report`, { headers })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 404, 422]);

    const period = new Date().toISOString().slice(0, 7);
    const report = await waitForUsage(env, demo.organizationId, period, 4);
    const byProduct = Object.fromEntries(report.byProduct.map((l) => [l.product, { quantity: l.quantity, unit: l.unit, calls: l.calls }]));
    expect(byProduct).toEqual({
      'company-report': { quantity: 1, unit: 'calls', calls: 1 },
      'company-credit-report': { quantity: 10, unit: 'credits', calls: 1 },
      'company-profile': { quantity: 8, unit: 'credits', calls: 1 },
      'company-financials': { quantity: 5, unit: 'credits', calls: 1 },
    });
    expect(report.closingBalance).toBe(report.openingBalance + report.credits.granted - 23);
    // Finance reads keys by name: the demo key's four calls (1 call-priced, 23 credits).
    const demoPrefix = demo.apiKey.slice(0, 12);
    expect(report.byKey.map((k) => [k.keyName, k.keyPrefix, k.quantity, k.unit, k.calls])).toEqual([
      ['Demo key', demoPrefix, 1, 'calls', 1],
      ['Demo key', demoPrefix, 23, 'credits', 3],
    ]);
    const table = (await run(process.execPath, [...cli, 'report', '--org', demo.organizationId, '--period', period], { env })).stdout;
    expect(table).toMatch(new RegExp(`^\\s*key_\\w+\\s+Demo key \\(${demoPrefix}…\\)\\s+23\\s+credits\\s+3\\s*$`, 'm'));
    await stopService(first);

    const second = await startService(env);
    const again = JSON.parse(await readFile(path.join(dataDir, 'demo.json'), 'utf8')) as { apiKey: string; organizationId: string };
    expect(again.apiKey).toBe(demo.apiKey);
    expect(again.organizationId).toBe(demo.organizationId);
    expect(second.output).not.toMatch(/loading sample companies/);
    await stopService(second);
  }, 180_000);
});

interface Running {
  child: ChildProcess;
  output: string;
}

async function startService(env: NodeJS.ProcessEnv): Promise<Running> {
  const child = spawn(process.execPath, [...cli, 'start'], { env: { ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const running: Running = { child, output: '' };
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      running.output += chunk.toString();
      if (running.output.includes('Ctrl-C stops everything')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`start exited with ${code}:\n${running.output}`)));
    setTimeout(() => reject(new Error(`start did not come up:\n${running.output}`)), 120_000).unref();
  });
  return running;
}

async function stopService(running: Running): Promise<void> {
  const exited = new Promise<string>((resolve) => running.child.once('exit', (code, signal) => resolve(`code ${code}, signal ${signal}`)));
  running.child.kill('SIGINT');
  const how = await exited;
  // Both, with the process's own words on failure: did our shutdown run to its end, and did the
  // process then leave with code 0 rather than by a signal?
  expect(running.output, `exit: ${how}`).toContain('stopped cleanly');
  expect(how, running.output.slice(-3000)).toBe('code 0, signal null');
}

interface ReportJson {
  openingBalance: number;
  closingBalance: number;
  credits: { granted: number };
  byProduct: { product: string; quantity: number; unit: string; calls: number }[];
  byKey: { keyName: string | null; keyPrefix: string | null; quantity: number; unit: string; calls: number }[];
}

async function waitForUsage(env: NodeJS.ProcessEnv, org: string, period: string, calls: number): Promise<ReportJson> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { stdout } = await run(process.execPath, [...cli, 'report', '--org', org, '--period', period, '--format', 'json'], { env });
    const report = JSON.parse(stdout) as ReportJson;
    if (report.byProduct.reduce((n, l) => n + l.calls, 0) >= calls || Date.now() > deadline) return report;
    await new Promise((r) => setTimeout(r, 300));
  }
}
