import { mkdtemp, readFile, rm } from 'node:fs/promises';
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
    const opened = await openDatabase(config, logger, 'open-database.test');
    try {
      expect(opened.embedded).toBe(false);
      expect(opened.connectionString).toContain(`:${serverPort}/`);
      expect((await opened.db.raw('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await opened.close();
    }
    // Closing the connection left the other process's server running.
    const again = await openDatabase(config, logger, 'open-database.test');
    await again.close();
    expect(again.embedded).toBe(false);
  }, 60_000);
});
