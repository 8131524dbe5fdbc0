import net from 'node:net';
import path from 'node:path';
import type { Config } from '../config/index.js';
import type { Logger } from '../logging/index.js';
import { createDb, type Db } from './create-db.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { migrateLatest } from './migrate.js';

export interface OpenDatabase {
  db: Db;
  connectionString: string;
  /** True when this process started the embedded server (and so must stop it). */
  embedded: boolean;
  close(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL under DATA_DIR. When another
 * process of ours (say `npm start`) already runs the embedded server, we connect to it instead
 * of starting a second one on the same folder: that is how the CLI works next to a running
 * service.
 */
export async function openDatabase(config: Config, logger: Logger, applicationName: string): Promise<OpenDatabase> {
  let connectionString = config.DATABASE_URL;
  let stopEmbedded: (() => Promise<void>) | undefined;
  if (!connectionString) {
    const embeddedUrl = `postgres://postgres:postgres@127.0.0.1:${config.EMBEDDED_PG_PORT}/companies`;
    if (await isListening('127.0.0.1', config.EMBEDDED_PG_PORT)) {
      connectionString = embeddedUrl;
    } else {
      const handle = await startEmbeddedPostgres({ dataDir: path.join(config.DATA_DIR, 'postgres'), port: config.EMBEDDED_PG_PORT, logger });
      connectionString = handle.connectionString;
      stopEmbedded = handle.stop;
    }
  }
  const db = createDb({ connectionString, poolMax: config.DATABASE_POOL_MAX, applicationName });
  if (config.MIGRATE_ON_START) {
    const applied = await migrateLatest(db);
    if (applied.length > 0) logger.info('migrations applied', { applied });
  }
  return {
    db,
    connectionString,
    embedded: stopEmbedded !== undefined,
    close: async () => {
      await db.destroy();
      if (stopEmbedded) await stopEmbedded();
    },
  };
}

function isListening(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
    socket.setTimeout(500, () => { socket.destroy(); resolve(false); });
  });
}
