// A real single-node Kafka (KRaft: broker and controller in one JVM) run from Apache Kafka's
// own jars, for machines without a Docker engine. The jars come from Maven Central through
// `mvn` and are cached outside the repository, so only the first run on a machine fetches them.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { killAndWait, launchLocalBroker, waitForKafka, type KafkaControlState } from './kafka-control.js';

const run = promisify(execFile);

export const KAFKA_VERSION = '3.9.1';
const SCALA_VERSION = '2.13';

export interface LocalKafkaOptions {
  /** e.g. ~/.cache/italian-company-data: jars go to <cacheRoot>/kafka-<version>/libs. */
  cacheRoot: string;
  /** A fresh folder for this run's config, log dir and broker output. */
  workDir: string;
  log: (line: string) => void;
}

export interface LocalKafka {
  brokers: string[];
  control: Extract<KafkaControlState, { kind: 'local' }>;
  /** Seconds spent fetching jars (0 when the cache was used) and starting the broker. */
  timings: { fetchSeconds: number; startSeconds: number };
}

export async function startLocalKafka(options: LocalKafkaOptions): Promise<LocalKafka> {
  const fetchStarted = Date.now();
  const libs = await ensureKafkaJars(options.cacheRoot, options.log);
  const fetchSeconds = (Date.now() - fetchStarted) / 1000;

  const startStarted = Date.now();
  const port = await freePort();
  const controllerPort = await freePort();
  const logDir = path.join(options.workDir, 'kafka-logs');
  const serverProperties = path.join(options.workDir, 'server.properties');
  const log4jProperties = path.join(options.workDir, 'log4j.properties');
  await writeFile(serverProperties, serverConfig({ port, controllerPort, logDir }));
  await writeFile(log4jProperties, log4jConfig);

  const java = 'java';
  const classpath = path.join(libs, '*');
  const jvm = ['-Xms256m', '-Xmx512m', '-XX:+UseG1GC', '-XX:MaxGCPauseMillis=20', '-Djava.awt.headless=true', `-Dlog4j.configuration=file:${log4jProperties}`, '-cp', classpath];

  // KRaft storage must be formatted once with a cluster id before the first start.
  await run(java, [...jvm, 'kafka.tools.StorageTool', 'format', '-t', clusterId(), '-c', serverProperties, '--ignore-formatted'], { cwd: options.workDir });

  const launch = { command: java, args: [...jvm, 'kafka.Kafka', serverProperties], cwd: options.workDir, logFile: path.join(options.workDir, 'kafka.out') };
  const pid = launchLocalBroker(launch);
  const brokers = [`127.0.0.1:${port}`];
  try {
    await waitForKafka(brokers, 90_000);
  } catch (err) {
    await killAndWait(pid, 'SIGKILL');
    throw new Error(`${(err as Error).message} (broker output: ${launch.logFile})`);
  }
  return {
    brokers,
    control: { kind: 'local', brokers, pid, port, ...launch },
    timings: { fetchSeconds, startSeconds: (Date.now() - startStarted) / 1000 },
  };
}

/** Returns the folder of Kafka's jars, fetching them with Maven on first use. */
export async function ensureKafkaJars(cacheRoot: string, log: (line: string) => void): Promise<string> {
  const home = path.join(cacheRoot, `kafka-${KAFKA_VERSION}`);
  const libs = path.join(home, 'libs');
  const expected = [`kafka_${SCALA_VERSION}-${KAFKA_VERSION}.jar`, 'slf4j-reload4j-1.7.36.jar'];
  if (existsSync(libs) && expected.every((jar) => existsSync(path.join(libs, jar)))) return libs;

  log(`fetching Apache Kafka ${KAFKA_VERSION} jars with Maven into ${libs} (first run on this machine only)`);
  await mkdir(home, { recursive: true });
  // Fetch into a private folder and rename at the end: two runs racing on a fresh machine, or
  // an interrupted fetch, never leave a half-filled libs/ behind.
  const staging = await mkdtemp(path.join(home, 'fetch-'));
  try {
    await writeFile(path.join(staging, 'pom.xml'), pom);
    await run('mvn', ['-q', '-B', '-f', path.join(staging, 'pom.xml'), 'dependency:copy-dependencies', '-DincludeScope=runtime', `-DoutputDirectory=${path.join(staging, 'libs')}`], { maxBuffer: 16 * 1024 * 1024 });
    // A libs/ from an older recipe (missing a jar) is replaced; one a racing run just made is kept.
    if (existsSync(libs) && !expected.every((jar) => existsSync(path.join(libs, jar)))) await rm(libs, { recursive: true, force: true });
    if (!existsSync(libs)) await rename(path.join(staging, 'libs'), libs);
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`mvn could not fetch Kafka ${KAFKA_VERSION}: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return libs;
}

// Kafka's cluster ids are 16 random bytes in URL-safe base64 without padding. One in 64
// starts with '-', which StorageTool's argument parser takes for an option ("--cluster-id:
// expected one argument"); Kafka's own Uuid.randomUuid() draws again in that case, so do we.
export function clusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

function serverConfig(p: { port: number; controllerPort: number; logDir: string }): string {
  return [
    'process.roles=broker,controller',
    'node.id=1',
    `controller.quorum.voters=1@127.0.0.1:${p.controllerPort}`,
    `listeners=PLAINTEXT://127.0.0.1:${p.port},CONTROLLER://127.0.0.1:${p.controllerPort}`,
    `advertised.listeners=PLAINTEXT://127.0.0.1:${p.port}`,
    'controller.listener.names=CONTROLLER',
    'inter.broker.listener.name=PLAINTEXT',
    'listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    `log.dirs=${p.logDir}`,
    'num.partitions=6',
    'auto.create.topics.enable=true',
    'offsets.topic.replication.factor=1',
    // 50 partitions by default: fewer makes the first consumer group join much faster.
    'offsets.topic.num.partitions=6',
    'transaction.state.log.replication.factor=1',
    'transaction.state.log.min.isr=1',
    'group.initial.rebalance.delay.ms=0',
    // Test data only needs to live as long as the run.
    'log.retention.hours=2',
    '',
  ].join('\n');
}

const log4jConfig = [
  'log4j.rootLogger=WARN, stdout',
  'log4j.appender.stdout=org.apache.log4j.ConsoleAppender',
  'log4j.appender.stdout.layout=org.apache.log4j.PatternLayout',
  'log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n',
  'log4j.logger.kafka.server.KafkaRaftServer=INFO',
  'log4j.logger.kafka.server.BrokerServer=INFO',
  '',
].join('\n');

const pom = `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.tests</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_${SCALA_VERSION}</artifactId>
      <version>${KAFKA_VERSION}</version>
    </dependency>
    <!-- Kafka's distribution ships this binding; without it the broker logs nothing at all. -->
    <dependency>
      <groupId>org.slf4j</groupId>
      <artifactId>slf4j-reload4j</artifactId>
      <version>1.7.36</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
      </plugin>
    </plugins>
  </build>
</project>
`;
