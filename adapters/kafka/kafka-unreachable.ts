import net from 'node:net';
import { causeChain, networkReason } from '../../core/errors/index.js';

/**
 * Kafka could not be reached: a person reads its message (a service's start-up prints it as its
 * one line, as it does DatabaseUnreachableError's), so it names the broker and the variable.
 * Not an AppError: no caller of the API sees it.
 */
export class KafkaUnreachableError extends Error {
  override name = 'KafkaUnreachableError';
}

/**
 * `err` as a KafkaUnreachableError ("cannot reach Kafka at 127.0.0.1:1 (connection refused);
 * check KAFKA_BROKERS") when kafkajs gave up connecting to a broker; undefined otherwise, for
 * its caller to report as it is.
 */
export function kafkaUnreachableError(err: unknown): KafkaUnreachableError | undefined {
  const e = causes(err).find((c) => c.name === 'KafkaJSConnectionError' || c.name === 'KafkaJSConnectionClosedError');
  if (!e) return undefined;
  const where = typeof e.broker === 'string' ? e.broker : 'the brokers';
  const reason = networkReason(e.code, 'broker') ?? (e.message === 'Connection timeout' ? 'no answer in time' : String(e.message));
  return new KafkaUnreachableError(`cannot reach Kafka at ${where} (${reason}); check KAFKA_BROKERS`, { cause: err });
}

/**
 * Whether kafkajs failed to reach a broker at all (a connection refused, closed or timed out, a
 * request with no answer in time), as opposed to a broker that answered with an error (not
 * authorized, an unknown topic) or a fault of ours. The usage sink's idle check counts only
 * these: Kafka counted as unreachable refuses every paid call, so an error that says nothing
 * about reaching the broker must never make it so.
 */
export function failedToReachKafka(err: unknown): boolean {
  return causes(err).some((c) => c.name === 'KafkaUnreachableError' || c.name === 'KafkaJSConnectionError' || c.name === 'KafkaJSConnectionClosedError' || c.name === 'KafkaJSRequestTimeoutError');
}

export interface BrokerAddress {
  host: string;
  port: number;
}

/**
 * A KafkaUnreachableError once every one of `brokers` has refused a TCP connection (or not
 * accepted one within `timeoutMs`); undefined as soon as one accepts, or with no brokers to
 * try. Milliseconds for a broker that is down, where kafkajs retries the refused connection for
 * about nine seconds before it says so. Says nothing about whether a broker that accepts also
 * answers: a stalled one accepts (its kernel does).
 */
export function refusedByEveryBroker(brokers: BrokerAddress[], timeoutMs: number): Promise<KafkaUnreachableError | undefined> {
  if (brokers.length === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let refusals = 0;
    for (const { host, port } of brokers) {
      const socket = net.connect({ host, port, timeout: timeoutMs });
      const refused = (code: string | undefined) => {
        socket.destroy();
        if (++refusals < brokers.length) return;
        resolve(new KafkaUnreachableError(`cannot reach Kafka at ${host}:${port} (${networkReason(code, 'broker') ?? code ?? 'no connection'})`));
      };
      socket.once('connect', () => {
        socket.destroy();
        resolve(undefined);
      });
      socket.once('timeout', () => refused('ETIMEDOUT'));
      socket.once('error', (err: NodeJS.ErrnoException) => refused(err.code));
    }
  });
}

/** `err` and its causes: kafkajs wraps the socket's failure (retries exceeded → its cause). */
const causes = (err: unknown) => causeChain(err) as KafkaErrorLike[];

interface KafkaErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  broker?: unknown;
}
