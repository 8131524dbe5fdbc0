import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../test/services/free-port.js';
import { parseConfig } from '../config/index.js';
import { createLogger } from '../logging/index.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './embedded-postgres.js';
import { openDatabase } from './open-database.js';

// The CLI next to a running `npm start`: both use the embedded server of one data folder.
let dir: string;
let server: EmbeddedPostgresHandle;
let serverPort: number;
const logger = createLogger({ level: 'silent' });

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'open-database-'));
  serverPort = await freePort();
  server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'postgres'), port: serverPort, logger });
}, 120_000);
afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** The process group of a process (field 5 of /proc/PID/stat, after the command in parentheses). */
const processGroup = async (pid: number | 'self') => Number((await readFile(`/proc/${pid}/stat`, 'utf8')).replace(/^.*\) /s, '').split(' ')[2]);

describe('the embedded server', () => {
  it('when it runs then it is in a process group of its own, so a terminal\'s Ctrl-C reaches only the service, which stops it after draining', async () => {
    const postmaster = Number((await readFile(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    expect(postmaster).toBeGreaterThan(0);
    expect(await processGroup(postmaster)).not.toBe(await processGroup('self'));
  });
});

describe('opening the embedded database', () => {
  it('when another process runs the data folder\'s server on another port than this one\'s EMBEDDED_PG_PORT, then this one connects to it instead of starting a second', async () => {
    const config = parseConfig({ DATA_DIR: dir, EMBEDDED_PG_PORT: String(await freePort()), MIGRATE_ON_START: 'false' });
    const opened = await openDatabase(config, logger, 'open-database.test', { requireCurrentSchema: false });
    try {
      expect(opened.embedded).toBe(false);
      expect(opened.connectionString).toContain(`:${serverPort}/`);
      expect((await opened.db.raw('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await opened.close();
    }
    // Closing the connection left the other process's server running.
    const again = await openDatabase(config, logger, 'open-database.test', { requireCurrentSchema: false });
    await again.close();
    expect(again.embedded).toBe(false);
  }, 60_000);

  it('when EMBEDDED_PG_PORT is taken by a server that is not this data folder\'s, then opening refuses, naming the port and the way out, and neither starts nor uses a database', async () => {
    // Another checkout's embedded server, or any other program: here the server of the first test's folder.
    const otherDir = await mkdtemp(path.join(os.tmpdir(), 'open-database-other-'));
    try {
      const config = parseConfig({ DATA_DIR: otherDir, EMBEDDED_PG_PORT: String(serverPort), MIGRATE_ON_START: 'false' });
      await expect(openDatabase(config, logger, 'open-database.test')).rejects.toThrow(
        new RegExp(`^EMBEDDED_PG_PORT ${serverPort} is already in use on 127\\.0\\.0\\.1 by another server, not the embedded PostgreSQL of ${otherDir.replaceAll('.', '\\.')}/postgres: .*set EMBEDDED_PG_PORT to a free port, or set DATABASE_URL`),
      );
      expect(existsSync(path.join(otherDir, 'postgres'))).toBe(false);
      // And a port held by something that is not PostgreSQL at all.
      const foreign = net.createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => foreign.listen(0, '127.0.0.1', resolve));
      const port = (foreign.address() as net.AddressInfo).port;
      try {
        await expect(openDatabase(parseConfig({ DATA_DIR: otherDir, EMBEDDED_PG_PORT: String(port), MIGRATE_ON_START: 'false' }), logger, 'open-database.test')).rejects.toThrow(`EMBEDDED_PG_PORT ${port} is already in use`);
      } finally {
        foreign.close();
      }
    } finally {
      await rm(otherDir, { recursive: true, force: true });
    }
  }, 60_000);
});
