import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres } from '../core/db/index.js';
import type { Logger } from '../core/logging/index.js';

/** A database of a benchmark's own, dropped (or its embedded server stopped) by `drop`. */
export interface Scratch {
  url: string;
  description: string;
  drop(): Promise<void>;
}

/**
 * A fresh database named `<prefix>_<time>`: on `databaseUrl`'s server when there is one, else an
 * embedded PostgreSQL under `workDir` (the benchmarks' "no servers to install" default).
 */
export async function openScratchDatabase(options: { prefix: string; databaseUrl: string | undefined; workDir: string; logger: Logger }): Promise<Scratch> {
  const name = `${options.prefix}_${Date.now().toString(36)}`;
  const { databaseUrl } = options;
  if (databaseUrl) {
    const admin = new pg.Client({ connectionString: databaseUrl });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${name}"`);
    await admin.end();
    const url = new URL(databaseUrl);
    url.pathname = `/${name}`;
    return {
      url: url.toString(),
      description: `database ${name} on ${url.host}`,
      drop: async () => {
        const c = new pg.Client({ connectionString: databaseUrl });
        await c.connect();
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
        await c.end();
      },
    };
  }
  const port = await freePort();
  const embedded = await startEmbeddedPostgres({ dataDir: path.join(options.workDir, 'postgres'), port, logger: options.logger, database: name });
  return { url: embedded.connectionString, description: `embedded PostgreSQL on port ${port} in ${options.workDir}`, drop: () => embedded.stop() };
}

/** A port free on loopback now (the OS's pick). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
