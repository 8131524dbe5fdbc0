// Starts what the suite needs, once per `vitest run`, and provides its addresses to the tests
// through inject(): a fresh PostgreSQL database (migrated) and a Kafka broker.
//   Postgres: DATABASE_URL's server, else testcontainers when Docker answers, else embedded.
//   Kafka:    KAFKA_BROKERS, else testcontainers when Docker answers, else a local KRaft broker
//             from Apache Kafka's jars (fetched with Maven once, cached outside the repo).
// TEST_SERVICES=postgres skips Kafka for quick local runs; `npm test` always starts it.
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createDb, migrateLatest } from '../../core/db/index.js';
import { createDatabase, dropDatabase, uniqueDatabaseName } from '../services/databases.js';
import { dockerEngineAnswers } from '../services/docker-engine.js';
import { startKafkaServer, type KafkaServer } from '../services/kafka-server.js';
import { startPostgresServer, type PostgresServer } from '../services/postgres-server.js';

const log = (line: string) => process.stderr.write(`[test services] ${line}\n`);

export default async function setup(project: TestProject) {
  const env = process.env;
  const began = Date.now();
  const skipKafka = env.TEST_SERVICES === 'postgres';
  const runDir = await mkdtemp(path.join(os.tmpdir(), 'icd-test-run-'));
  await chmod(runDir, 0o755);
  const kafkaControlFile = path.join(runDir, 'kafka-control.json');

  const needsDocker = !env.DATABASE_URL || (!env.KAFKA_BROKERS && !skipKafka);
  const docker = needsDocker && (await dockerEngineAnswers(env.DOCKER_HOST));
  if (needsDocker) log(docker ? 'a Docker engine answers: using testcontainers' : 'no Docker engine: using embedded PostgreSQL / a local Kafka broker');

  const cleanups: { what: string; run: () => Promise<void> }[] = [{ what: 'run folder', run: () => rm(runDir, { recursive: true, force: true }) }];
  const teardown = async () => {
    for (const step of cleanups.reverse()) {
      await step.run().catch((err: unknown) => log(`could not clean up ${step.what}: ${err instanceof Error ? err.message : String(err)}`));
    }
  };

  try {
    // Both services start at once; if either fails, the other is stopped before we give up.
    const [pgResult, kafkaResult] = await Promise.allSettled([
      startPostgresServer({ databaseUrl: env.DATABASE_URL, docker, log }),
      startKafkaServer({
        brokersEnv: env.KAFKA_BROKERS,
        skip: skipKafka,
        docker,
        controlFile: kafkaControlFile,
        cacheRoot: path.join(env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'italian-company-data'),
        workDir: runDir,
        log,
      }),
    ]);
    if (pgResult.status === 'fulfilled') cleanups.push({ what: 'PostgreSQL', run: pgResult.value.stop });
    if (kafkaResult.status === 'fulfilled') cleanups.push({ what: 'Kafka', run: kafkaResult.value.stop });
    if (pgResult.status === 'rejected') throw new Error(`PostgreSQL for the tests: ${message(pgResult.reason)}`);
    if (kafkaResult.status === 'rejected') throw new Error(`Kafka for the tests: ${message(kafkaResult.reason)}`);
    const postgres: PostgresServer = pgResult.value;
    const kafka: KafkaServer = kafkaResult.value;

    // A database of the run's own: runs never collide with each other or with dev data.
    const database = uniqueDatabaseName('test');
    const databaseUrl = await createDatabase(postgres.serverUrl, database);
    cleanups.push({ what: `database ${database}`, run: () => dropDatabase(postgres.serverUrl, database) });
    const db = createDb({ connectionString: databaseUrl, poolMax: 1, applicationName: 'test-setup' });
    try {
      await migrateLatest(db);
    } finally {
      await db.destroy();
    }

    log(`postgres: ${postgres.source}; database ${database} (migrated)`);
    log(`kafka: ${kafka.source}`);
    log(`ready in ${((Date.now() - began) / 1000).toFixed(1)} s`);
    project.provide('databaseUrl', databaseUrl);
    project.provide('kafkaBrokers', kafka.brokers.join(','));
    project.provide('kafkaControlFile', kafkaControlFile);
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** A migrated database of this run's own. */
    databaseUrl: string;
    /** Comma-separated host:port; empty when TEST_SERVICES=postgres. */
    kafkaBrokers: string;
    /** For stopping/starting the broker in fault tests: see test/services/kafka-control.ts. */
    kafkaControlFile: string;
  }
}
