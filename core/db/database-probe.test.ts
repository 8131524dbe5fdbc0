import { afterEach, describe, expect, inject, it } from 'vitest';
import { hostAndPort, startTcpProxy, type TcpProxy } from '../../test/support/tcp-proxy.js';
import { withinDeadline } from '../deadline/index.js';
import { createLogger } from '../logging/index.js';
import { createDb, type Db } from './create-db.js';
import { createDatabaseProbe } from './database-probe.js';

// The health checks' round trip behind a TCP relay that stops forwarding without closing
// anything: the database frozen, or a partition. No answer and no error ever come, so whatever
// a probe's query holds, it holds until something gives it up.

interface PoolCounts {
  numUsed(): number;
  numPendingCreates(): number;
}

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function poolBehindProxy(poolMax: number): Promise<{ proxy: TcpProxy; db: Db; taken(): number }> {
  const databaseUrl = inject('databaseUrl');
  const proxy = await startTcpProxy(hostAndPort(databaseUrl));
  const db = createDb({ connectionString: proxy.urlFor(databaseUrl), poolMax, applicationName: 'database-probe-test', logger: createLogger({ level: 'silent' }) });
  // The relay closed first: the pool's goodbyes on frozen connections then end at once.
  cleanups.push(() => db.destroy(), () => proxy.close());
  // A pool in use: every connection open and idle when the server stops answering.
  await Promise.all(Array.from({ length: poolMax }, () => db.raw('SELECT pg_sleep(0.05)')));
  const pool = (db.client as { pool: PoolCounts }).pool;
  // Connections handed out or being opened: those a caller cannot have.
  return { proxy, db, taken: () => pool.numUsed() + pool.numPendingCreates() };
}

/** A probe as /healthz makes it: its answer within a second, or none. */
const askWithin = (probe: () => Promise<void>, ms = 1_000) =>
  withinDeadline(ms, probe(), () => new Error('no answer within the probe deadline')).then(
    () => true,
    () => false,
  );

async function waitFor(what: string, holds: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await holds())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('the database probe when the database stops answering without closing', () => {
  it('when twenty probes come, together and every 100 ms, then they hold at most one pooled connection between them, and that one is dropped once abandoned', async () => {
    const { proxy, db, taken } = await poolBehindProxy(4);
    const probe = createDatabaseProbe(db, { abandonAfterMs: 1_500 });
    expect(await askWithin(probe)).toBe(true);
    const openBefore = proxy.openConnections();
    proxy.freeze();

    let mostTaken = 0;
    const sampler = setInterval(() => (mostTaken = Math.max(mostTaken, taken())), 20);
    try {
      const answers: Promise<boolean>[] = [];
      for (let i = 0; i < 5; i++) answers.push(askWithin(probe));
      for (let i = 0; i < 15; i++) {
        await new Promise((r) => setTimeout(r, 100));
        answers.push(askWithin(probe));
      }
      expect(await Promise.all(answers)).toEqual(Array(20).fill(false));
      expect(mostTaken).toBe(1);
      // Past the abandon, nothing is held, and the connections given up are closed.
      await waitFor('the probe to give its connection back', () => taken() === 0, 3_000);
      expect(proxy.openConnections()).toBeLessThan(openBefore);
    } finally {
      clearInterval(sampler);
    }
  });

  it('when the database answers again on new connections then a probe answers within the abandon time, not after the frozen connection it was waiting on', async () => {
    const { proxy, db } = await poolBehindProxy(1);
    const probe = createDatabaseProbe(db, { abandonAfterMs: 1_500 });
    proxy.freeze();
    expect(await askWithin(probe)).toBe(false);
    proxy.thaw();
    const began = Date.now();
    await waitFor('a probe to answer', () => askWithin(probe, 500), 6_000);
    expect(Date.now() - began).toBeLessThan(3_000);
  });
});
