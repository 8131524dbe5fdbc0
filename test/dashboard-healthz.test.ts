import net from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../core/db/index.js';
import { testDb } from './support/database.js';
import { startTestDashboard } from './dashboard-fixtures.js';

// The dashboard's /healthz answers as the API's and the tool server's do: JSON, and 503 within
// about a second when the database is gone, whether it refuses connections or never answers.
// Before, a dead database gave a 500 HTML error page, after however long the pool took.

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function dashboardOn(db: Db) {
  cleanups.push(() => db.destroy());
  const dashboard = await startTestDashboard(db);
  cleanups.push(() => dashboard.close());
  return dashboard;
}

/** A server that accepts connections and never says a word: a database that hangs. */
async function blackHole(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => new Promise((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}

describe('the dashboard health check', () => {
  it('when the database answers then 200 ok', async () => {
    const dashboard = await dashboardOn(testDb());
    const res = await fetch(`${dashboard.url}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it.each([
    ['refuses connections', async () => ({ port: 1, close: async () => {} })],
    ['never answers', blackHole],
  ])('when the database %s then 503 in JSON within about a second', async (_, server) => {
    const { port, close } = await server();
    const db = createDb({ connectionString: `postgres://postgres@127.0.0.1:${port}/x`, poolMax: 1 });
    const dashboard = await dashboardOn(db);
    // Closed first (cleanups run last to first): the pool's connection attempt then fails at
    // once, instead of the pool's close waiting for it.
    cleanups.push(close);
    const started = Date.now();
    const res = await fetch(`${dashboard.url}/healthz`);
    expect(res.status).toBe(503);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status: 'unavailable', checks: { database: 'unreachable' } });
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
