import { afterAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { AppError } from '../errors/index.js';
import { createLogger } from '../logging/index.js';
import { testDb } from '../../test/support/database.js';
import { runPreparedStoreQuery, runStoreQuery, storeStatement } from './run-store-query.js';

const applicationName = `run-store-query-${randomBytes(4).toString('hex')}`;
const db = testDb({ applicationName, poolMax: 2 });
const logger = createLogger({ level: 'silent' });
afterAll(() => db.destroy());

const activeSleeps = async () =>
  (await db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = ? AND state = 'active' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()`, [applicationName])).rows[0].n;

describe('runStoreQuery / runPreparedStoreQuery', () => {
  it('when an ad-hoc query outlasts the deadline then it fails with upstream_timeout and Postgres cancels it', async () => {
    const failure = await runStoreQuery({ queryTimeoutMs: 150, logger }, 'sleep', db.raw('SELECT pg_sleep(5)')).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(AppError);
    expect(failure).toMatchObject({ code: 'upstream_timeout' });
    await expect.poll(activeSleeps, { timeout: 2_000 }).toBe(0);
  });

  it('when a prepared statement outlasts the deadline then it fails with upstream_timeout, is cancelled, and the connection is usable again', async () => {
    const options = { db, queryTimeoutMs: 150, logger };
    const failure = await runPreparedStoreQuery(options, 'sleep', storeStatement('test_sleep', 'SELECT pg_sleep($1)'), [5]).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'upstream_timeout' });
    await expect.poll(activeSleeps, { timeout: 2_000 }).toBe(0);
    // Both pooled connections answer afterwards.
    const rows = await Promise.all([1, 2].map((n) => runPreparedStoreQuery<{ n: number }>({ ...options, queryTimeoutMs: 2_000 }, 'one', storeStatement('test_one', 'SELECT $1::int AS n'), [n])));
    expect(rows.map((r) => r[0]!.n)).toEqual([1, 2]);
  });

  it('when the server drops the connection a query is running on (pg_terminate_backend, a failover) then the query runs again on a fresh one, not upstream_error', async () => {
    const options = { db, queryTimeoutMs: 5_000, logger };
    const other = testDb({ poolMax: 1 });
    try {
      // Ended while it runs, so it meets the dropped connection for certain.
      const running = runPreparedStoreQuery<{ n: number }>(options, 'slow one', storeStatement('test_slow_one', 'SELECT pg_sleep($1::float), 7 AS n'), [0.5]);
      await expect.poll(activeSleeps, { timeout: 2_000 }).toBe(1);
      // Only the running one: an idle pooled connection whose last statement was an earlier
      // test's pg_sleep also matches the text, and ending it too made the retry meet it.
      await other.raw("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ? AND state = 'active' AND query LIKE '%pg_sleep%' AND pid <> pg_backend_pid()", [applicationName]);
      expect((await running)[0]!.n).toBe(7);
    } finally {
      await other.destroy();
    }
  });

  it('when the statement itself fails then it is upstream_error with the catalogue message', async () => {
    const failure = await runPreparedStoreQuery({ db, queryTimeoutMs: 2_000, logger }, 'broken', storeStatement('test_broken', 'SELECT * FROM no_such_table_here'), []).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 'upstream_error' });
    expect((failure as Error).message).not.toContain('no_such_table');
  });
});
