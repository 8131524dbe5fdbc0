// Stop and start the test run's Kafka broker from any process (a fault test runs in a vitest
// worker, not in the global setup that started the broker). Everything needed to do that lives
// in a small JSON file whose path the global setup provides as `kafkaControlFile`.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { Kafka, logLevel } from 'kafkajs';
import { getContainerRuntimeClient } from 'testcontainers';
import { isListening } from './free-port.js';

export type KafkaControlState =
  /** A broker run from Apache Kafka's jars on this machine (see kafka-local.ts). */
  | { kind: 'local'; brokers: string[]; pid: number; port: number; command: string; args: string[]; cwd: string; logFile: string }
  /** A testcontainers container bound to a fixed host port, so it comes back on the same address. */
  | { kind: 'container'; brokers: string[]; containerId: string }
  /** KAFKA_BROKERS pointed at a broker we do not own: never stopped by tests. */
  | { kind: 'external'; brokers: string[] }
  /** TEST_SERVICES=postgres: no broker in this run. */
  | { kind: 'none'; brokers: [] };

export async function readKafkaControl(file: string): Promise<KafkaControlState> {
  return JSON.parse(await readFile(file, 'utf8')) as KafkaControlState;
}

export async function writeKafkaControl(file: string, state: KafkaControlState): Promise<void> {
  // Write then rename, so a reader never sees half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(state, null, 2));
  await rename(tmp, file);
}

/** Whether this run's broker can be stopped and started by a test (false for KAFKA_BROKERS or no Kafka). */
export async function canControlKafka(file: string): Promise<boolean> {
  const state = await readKafkaControl(file);
  return state.kind === 'local' || state.kind === 'container';
}

export interface StopOptions {
  /** SIGKILL (a crash) instead of a clean shutdown. */
  hard?: boolean;
}

export async function stopKafkaBroker(file: string, options: StopOptions = {}): Promise<void> {
  const state = await readKafkaControl(file);
  if (state.kind === 'local') {
    await killAndWait(state.pid, options.hard ? 'SIGKILL' : 'SIGTERM');
    await waitUntil(async () => !(await isListening(state.port)), 30_000, `Kafka still listening on ${state.port}`);
  } else if (state.kind === 'container') {
    const client = await getContainerRuntimeClient();
    await client.container.stop(client.container.getById(state.containerId), { timeout: options.hard ? 0 : 10 });
  } else {
    throw new Error(`the Kafka broker of this run cannot be stopped (${state.kind}); check canControlKafka() first`);
  }
}

/** Starts the broker again on the same address and log directory, and waits until it answers. */
export async function startKafkaBroker(file: string, timeoutMs = 60_000): Promise<void> {
  const state = await readKafkaControl(file);
  if (state.kind === 'local') {
    const pid = launchLocalBroker(state);
    await writeKafkaControl(file, { ...state, pid });
  } else if (state.kind === 'container') {
    const client = await getContainerRuntimeClient();
    await client.container.start(client.container.getById(state.containerId));
  } else {
    throw new Error(`the Kafka broker of this run cannot be started (${state.kind})`);
  }
  await waitForKafka(state.brokers, timeoutMs);
}

export async function restartKafkaBroker(file: string, options: StopOptions = {}): Promise<void> {
  await stopKafkaBroker(file, options);
  await startKafkaBroker(file);
}

/**
 * Spawns the broker detached from our stdio (output goes to its log file) and unreferenced,
 * so the process that restarts it can exit; the global teardown kills it by the pid on file.
 */
export function launchLocalBroker(state: Pick<Extract<KafkaControlState, { kind: 'local' }>, 'command' | 'args' | 'cwd' | 'logFile'>): number {
  const out = openSync(state.logFile, 'a');
  try {
    const child = spawn(state.command, state.args, { cwd: state.cwd, stdio: ['ignore', out, out] });
    child.unref();
    if (child.pid === undefined) throw new Error(`could not start ${state.command}`);
    return child.pid;
  } finally {
    closeSync(out);
  }
}

/** Resolves once an admin client can list topics; Kafka accepts connections before it can serve. */
export async function waitForKafka(brokers: string[], timeoutMs: number): Promise<void> {
  const kafka = new Kafka({ clientId: 'test-services', brokers, logLevel: logLevel.NOTHING, retry: { retries: 0 }, connectionTimeout: 1_000, requestTimeout: 2_000 });
  let lastError: unknown;
  const ready = async () => {
    const admin = kafka.admin();
    try {
      await admin.connect();
      await admin.listTopics();
      return true;
    } catch (err) {
      lastError = err;
      return false;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
  };
  await waitUntil(ready, timeoutMs, () => `Kafka at ${brokers.join(',')} did not answer: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A killed process whose parent already exited waits as a zombie for PID 1 to reap it, which
  // in some containers never happens: a zombie counts as gone.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true;
  }
}

/** Signals pid and waits for it to exit; a clean shutdown that hangs is finished with SIGKILL. */
export async function killAndWait(pid: number, signal: NodeJS.Signals, graceMs = 30_000): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid, signal);
  const gone = await waitUntil(async () => !isAlive(pid), graceMs, null);
  if (!gone) {
    try { process.kill(pid, 'SIGKILL'); } catch { /* exited meanwhile */ }
    await waitUntil(async () => !isAlive(pid), 10_000, `process ${pid} survived SIGKILL`);
  }
}

async function waitUntil(check: () => Promise<boolean>, timeoutMs: number, failure: string | (() => string) | null): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) {
      if (failure === null) return false;
      throw new Error(typeof failure === 'function' ? failure() : failure);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
