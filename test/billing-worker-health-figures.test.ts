// The billing worker run alone, as production runs it (from its source, through tsx), on the
// Postgres bus: its /livez, and the count of unresolved dead letters its /healthz reports (an
// SRE alerts on it; before, only the operators' overview showed it), read at most every few
// seconds however often it is probed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, migrateLatest, type Db } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { createPostgresUsageSink } from '../core/usage/index.js';
import { createBillingOrg, usageEvent } from './billing-fixtures.js';
import { killChildren } from './support/child-processes.js';
import { createScratchDatabase, type ScratchDatabase } from './support/database.js';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const running: ChildProcess[] = [];
let database: ScratchDatabase;
let db: Db;
let dataDir: string;
let base: string;
let worker: ChildProcess;
let exited: Promise<number | null>;

beforeAll(async () => {
  database = await createScratchDatabase('worker_figures');
  db = createDb({ connectionString: database.url, poolMax: 2 });
  await migrateLatest(db);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'worker-figures-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'billing-worker/main.ts'], {
    cwd: repoRoot,
    env: { ...process.env, DATABASE_URL: database.url, KAFKA_BROKERS: '', REDIS_URL: '', HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'info', BILLING_WORKER_PORT: '0' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.push(child);
  worker = child;
  exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  for (let i = 0; i < 600; i++) {
    const line = output.split('\n').find((l) => l.includes('"billing worker health listening"'));
    if (line) {
      base = (JSON.parse(line) as { url: string }).url.replace(/\/healthz$/, '');
      return;
    }
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the billing worker did not listen:\n${output.slice(-3000)}`);
}, 60_000);
afterAll(async () => {
  await killChildren(running);
  await db?.destroy();
  await database?.drop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

async function healthz(): Promise<{ status: number; body: { status: string; openDeadLetters: number | null } }> {
  const res = await fetch(`${base}/healthz`);
  return { status: res.status, body: (await res.json()) as { status: string; openDeadLetters: number | null } };
}

describe('the billing worker /livez and /healthz', () => {
  it('when /livez is asked then 200 ok, and another method is 405 with Allow', async () => {
    const res = await fetch(`${base}/livez`);
    expect({ status: res.status, body: await res.json() }).toEqual({ status: 200, body: { status: 'ok' } });
    const post = await fetch(`${base}/livez`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
  });

  it('when dead letters are left unresolved then /healthz counts them, read once per few seconds, not once per probe', async () => {
    let first = await healthz();
    for (let i = 0; i < 100 && first.body.status !== 'ok'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      first = await healthz();
    }
    expect(first).toMatchObject({ status: 200, body: { status: 'ok', openDeadLetters: 0 } });

    await db('usage_dead_letters').insert([
      { bus: 'postgres', payload: 'not json 1', reason: 'test', source: 'test#1' },
      { bus: 'postgres', payload: 'not json 2', reason: 'test', source: 'test#2' },
      { bus: 'postgres', payload: 'not json 3', reason: 'test', source: 'test#3', resolved_at: new Date(), resolved_by: 'test', resolution: 'test' },
    ]);
    // Probes right after: the count read a moment ago, not a query each.
    expect((await healthz()).body.openDeadLetters).toBe(0);

    const began = Date.now();
    let later = await healthz();
    while (later.body.openDeadLetters !== 2 && Date.now() - began < 15_000) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      later = await healthz();
    }
    expect(later).toMatchObject({ status: 200, body: { status: 'ok', openDeadLetters: 2 } });
  }, 30_000);

  // Last: the worker is gone after it.
  it('when SIGTERM comes while a batch is in flight then /livez answers 503 stopping while the worker drains, and it exits 0', async () => {
    const { organizationId } = await createBillingOrg(db, { credits: 1_000 });
    const sink = createPostgresUsageSink(db, { logger: createLogger({ level: 'silent' }) });
    // The worker's batch waits on this lock, so its drain lasts as long as the test holds it.
    const trx = await db.transaction();
    try {
      await trx('allowances').where({ organization_id: organizationId }).forUpdate().first();
      await sink.publish(usageEvent(organizationId));
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      worker.kill('SIGTERM');
      let live = await fetch(`${base}/livez`);
      for (let i = 0; i < 50 && live.status === 200; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        live = await fetch(`${base}/livez`);
      }
      expect({ status: live.status, body: await live.json() }).toEqual({ status: 503, body: { status: 'stopping', since: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
    } finally {
      await trx.commit();
      await sink.close();
    }
    expect(await exited).toBe(0);
  }, 30_000);
});
