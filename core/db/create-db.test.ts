// TCP keepalive on every connection we open, seen where it takes effect: the kernel's timer on
// the socket (/proc/net/tcp, Linux). Without it, a pooled connection or the LISTEN client to a
// server whose host died stays open for ever, and so does whatever waits on it.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type net from 'node:net';
import { afterAll, describe, expect, inject, it } from 'vitest';
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
