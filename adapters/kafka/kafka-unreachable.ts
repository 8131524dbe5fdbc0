/**
 * Kafka could not be reached: a person reads its message (a service's start-up prints it as its
 * one line, as it does DatabaseUnreachableError's), so it names the broker and the variable.
 * Not an AppError: no caller of the API sees it.
 */
export class KafkaUnreachableError extends Error {
  override name = 'KafkaUnreachableError';
}

// Raised by the socket before Kafka says a word, as core/db/connection-failure.ts words them.
const networkReasons: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ECONNRESET: 'the broker closed the connection',
};

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
    const reason = (typeof e.code === 'string' && networkReasons[e.code]) || (e.message === 'Connection timeout' ? 'no answer in time' : e.message);
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
