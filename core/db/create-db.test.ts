// TCP keepalive on every connection we open, seen where it takes effect: the kernel's timer on
// the socket (/proc/net/tcp, Linux). Without it, a pooled connection or the LISTEN client to a
// server whose host died stays open for ever, and so does whatever waits on it.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type net from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { hostAndPort, startTcpProxy } from '../../test/support/tcp-proxy.js';
import { createLogger } from '../logging/index.js';
import { createDb, createListenClient } from './create-db.js';

interface SocketHolder {
  connection: { stream: net.Socket };
}

/**
 * The timer the kernel runs on this TCP connection of ours (found by its two ports):
 * `tr` 2 on an established connection is the keepalive timer (0: none); `tm->when` is in
 * ticks of 1/100 s.
 */
async function kernelTimer(socket: net.Socket): Promise<{ timer: number; seconds: number }> {
  const hex = (port: number | undefined) => port!.toString(16).toUpperCase().padStart(4, '0');
  const [local, remote] = [hex(socket.localPort), hex(socket.remotePort)];
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = existsSync(file) ? (await readFile(file, 'utf8')).split('\n').slice(1) : [];
    for (const line of lines) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${local}`) && fields[2]?.endsWith(`:${remote}`)) {
        const [timer, when] = fields[5]!.split(':');
        return { timer: parseInt(timer!, 16), seconds: parseInt(when!, 16) / 100 };
      }
    }
  }
  throw new Error(`no TCP connection from port ${socket.localPort} to ${socket.remotePort} in /proc/net/tcp`);
}

describe.skipIf(!existsSync('/proc/net/tcp'))('connections to Postgres', () => {
  const db = createDb({ connectionString: inject('databaseUrl'), poolMax: 1, applicationName: 'create-db-test' });
  afterAll(() => db.destroy());

  it('when createDb opens a pooled connection then the kernel probes it after 10 s without traffic (TCP keepalive)', async () => {
    const client = db.client as { acquireConnection(): Promise<SocketHolder>; releaseConnection(c: SocketHolder): Promise<unknown> };
    const connection = await client.acquireConnection();
    try {
      const { timer, seconds } = await kernelTimer(connection.connection.stream);
      expect(timer).toBe(2);
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(10);
    } finally {
      await client.releaseConnection(connection);
    }
  });

  it('when createListenClient connects then its connection has TCP keepalive too', async () => {
    const listen = createListenClient(inject('databaseUrl'));
    await listen.connect();
    try {
      const { timer, seconds } = await kernelTimer((listen as unknown as SocketHolder).connection.stream);
      expect(timer).toBe(2);
      expect(seconds).toBeLessThanOrEqual(10);
    } finally {
      await listen.end();
    }
  });
});

// A server that accepts the connection and then says nothing (frozen, a partition): pg's connect
// has no limit of its own. Before, knex gave up waiting after 5 s and tarn after 30, but the
// socket stayed open behind them for as long as the server was away, one more per attempt.
describe('a pooled connection to a server that accepts and never answers', () => {
  it('when the pool opens one then the caller is told after the acquire timeout and the socket is closed soon after, not left open', async () => {
    const proxy = await startTcpProxy(hostAndPort(inject('databaseUrl')));
    const db = createDb({ connectionString: proxy.urlFor(inject('databaseUrl')), poolMax: 1, logger: createLogger({ level: 'silent' }) });
    try {
      proxy.freeze();
      const failure = (await db.raw('SELECT 1').catch((err: unknown) => err)) as Error;
      expect(failure.name).toBe('KnexTimeoutError');
      expect(proxy.openConnections()).toBe(1);
      const until = Date.now() + 8_000;
      while (proxy.openConnections() > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(proxy.openConnections()).toBe(0);
    } finally {
      await proxy.close();
      await db.destroy();
    }
  }, 20_000);
});
