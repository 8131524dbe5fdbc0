import { GenericContainer, Wait } from 'testcontainers';
import { freePort } from './free-port.js';
import { killAndWait, readKafkaControl, waitForKafka, writeKafkaControl, type KafkaControlState } from './kafka-control.js';
import { KAFKA_VERSION, startLocalKafka } from './kafka-local.js';

export interface KafkaServer {
  brokers: string[];
  source: string;
  stop(): Promise<void>;
}

export interface KafkaServerOptions {
  /** KAFKA_BROKERS, comma-separated. */
  brokersEnv: string | undefined;
  /** TEST_SERVICES=postgres: no Kafka in this run. */
  skip: boolean;
  docker: boolean;
  /** Where the stop/start handle for tests is written (see kafka-control.ts). */
  controlFile: string;
  cacheRoot: string;
  workDir: string;
  log: (line: string) => void;
}

/** KAFKA_BROKERS when set; else a container when Docker answers; else a local broker from Kafka's jars. */
export async function startKafkaServer(options: KafkaServerOptions): Promise<KafkaServer> {
  const noop = async () => undefined;
  if (options.skip) {
    await writeKafkaControl(options.controlFile, { kind: 'none', brokers: [] });
    return { brokers: [], source: 'not started (TEST_SERVICES=postgres)', stop: noop };
  }
  if (options.brokersEnv) {
    const brokers = options.brokersEnv.split(',').map((b) => b.trim()).filter(Boolean);
    await writeKafkaControl(options.controlFile, { kind: 'external', brokers });
    await waitForKafka(brokers, 30_000);
    return { brokers, source: `KAFKA_BROKERS (${brokers.join(',')})`, stop: noop };
  }
  if (options.docker) return startContainer(options.controlFile);

  const local = await startLocalKafka({ cacheRoot: options.cacheRoot, workDir: options.workDir, log: options.log });
  await writeKafkaControl(options.controlFile, local.control);
  const fetched = local.timings.fetchSeconds >= 1 ? `jars fetched in ${local.timings.fetchSeconds.toFixed(1)} s, ` : '';
  return {
    brokers: local.brokers,
    source: `local KRaft broker from Apache Kafka ${KAFKA_VERSION} jars (${local.brokers.join(',')}; ${fetched}started in ${local.timings.startSeconds.toFixed(1)} s; output in ${local.control.logFile})`,
    // A fault test may have restarted the broker: kill the pid on file, not the one we started.
    stop: async () => {
      const state = await readKafkaControl(options.controlFile);
      if (state.kind === 'local') await killAndWait(state.pid, 'SIGTERM', 15_000);
    },
  };
}

async function startContainer(controlFile: string): Promise<KafkaServer> {
  // The broker advertises the address clients must use, so the host port is chosen up front
  // and bound fixed; it also stays the same when a fault test stops and starts the container.
  const port = await freePort();
  const image = `apache/kafka:${KAFKA_VERSION}`;
  const container = await new GenericContainer(image)
    .withExposedPorts({ container: 9092, host: port })
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: 'PLAINTEXT://:9092,CONTROLLER://:9093',
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${port}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_NUM_PARTITIONS: '6',
      KAFKA_AUTO_CREATE_TOPICS_ENABLE: 'true',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '6',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_HEAP_OPTS: '-Xmx512m -Xms256m',
    })
    .withWaitStrategy(Wait.forListeningPorts())
    .start();
  const brokers = [`127.0.0.1:${port}`];
  const control: KafkaControlState = { kind: 'container', brokers, containerId: container.getId() };
  await writeKafkaControl(controlFile, control);
  await waitForKafka(brokers, 90_000);
  return { brokers, source: `testcontainers ${image} (${brokers.join(',')})`, stop: async () => { await container.stop(); } };
}
