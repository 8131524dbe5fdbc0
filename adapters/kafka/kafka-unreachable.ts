import { networkReason } from '../../core/errors/index.js';

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
 * its caller to report as it is. kafkajs wraps the socket's failure (retries exceeded → its
 * cause), so the chain is walked.
 */
export function kafkaUnreachableError(err: unknown): KafkaUnreachableError | undefined {
  for (let e = err as KafkaErrorLike | undefined, depth = 0; e && depth < 5; e = e.cause as KafkaErrorLike | undefined, depth++) {
    if (e.name !== 'KafkaJSConnectionError' && e.name !== 'KafkaJSConnectionClosedError') continue;
    const where = typeof e.broker === 'string' ? e.broker : 'the brokers';
    const reason = networkReason(e.code, 'broker') ?? (e.message === 'Connection timeout' ? 'no answer in time' : String(e.message));
    return new KafkaUnreachableError(`cannot reach Kafka at ${where} (${reason}); check KAFKA_BROKERS`, { cause: err });
  }
  return undefined;
}

interface KafkaErrorLike {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  broker?: unknown;
  cause?: unknown;
}
