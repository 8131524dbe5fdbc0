import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GenericContainer, Wait } from 'testcontainers';
import { startEmbeddedPostgres } from '../../core/db/index.js';
import { createLogger } from '../../core/logging/index.js';
import { freePort } from './free-port.js';

export interface PostgresServer {
  /** A URL on which the test run may create and drop databases. */
  serverUrl: string;
  /** Where the server came from, for the log line. */
  source: string;
  stop(): Promise<void>;
}

export interface PostgresServerOptions {
  databaseUrl: string | undefined;
  docker: boolean;
  log: (line: string) => void;
}

/** DATABASE_URL when set; else a container when Docker answers; else embedded PostgreSQL. */
export async function startPostgresServer(options: PostgresServerOptions): Promise<PostgresServer> {
  if (options.databaseUrl) {
    return { serverUrl: options.databaseUrl, source: `DATABASE_URL (${hostOf(options.databaseUrl)})`, stop: async () => undefined };
  }
  if (options.docker) return startContainer();
  return startEmbedded();
}

async function startContainer(): Promise<PostgresServer> {
  const container = await new GenericContainer('postgres:16-alpine')
    .withEnvironment({ POSTGRES_PASSWORD: 'postgres' })
    .withExposedPorts(5432)
    .withTmpFs({ '/var/lib/postgresql/data': 'rw' })
    // The image's entrypoint starts the server twice (init, then for real): wait for the second.
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const serverUrl = `postgres://postgres:postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
  return { serverUrl, source: `testcontainers postgres:16-alpine (${hostOf(serverUrl)})`, stop: async () => { await container.stop(); } };
}

async function startEmbedded(): Promise<PostgresServer> {
  // As root the server runs as the `postgres` user, which must be able to enter this folder.
  const dir = await mkdtemp(path.join(os.tmpdir(), 'icd-test-pg-'));
  await chmod(dir, 0o755);
  const port = await freePort();
  const logger = createLogger({ level: 'warn' });
  try {
    const handle = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), port, logger, database: 'test_maintenance' });
    return {
      serverUrl: handle.connectionString,
      source: `embedded PostgreSQL (127.0.0.1:${port}, data in ${dir})`,
      stop: async () => {
        await handle.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

function hostOf(url: string): string {
  const u = new URL(url);
  return `${u.hostname}:${u.port || 5432}`;
}
