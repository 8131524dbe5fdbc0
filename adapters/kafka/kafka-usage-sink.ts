import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import { AppError } from '../../core/errors/index.js';
import type { Logger } from '../../core/logging/index.js';
import type { UsageEvent, UsageSink } from '../../core/usage/index.js';
import { ensureTopics } from './create-kafka.js';

export interface KafkaUsageSinkOptions {
  kafka: Kafka;
  topic: string;
  /** Partitions of the topic when we have to create it. */
  partitions: number;
  logger: Logger;
  /** Most events in one produce request. */
  maxBatch?: number;
  /** How long the first event of a batch waits for company when nothing is in flight. */
  lingerMs?: number;
  /** kafkajs retry of one send; the default rides out a broker restart (about ten seconds). */
  retry?: { initialRetryTime: number; retries: number; maxRetryTime: number };
}

export interface KafkaUsageSink extends UsageSink {
  /** Connects and creates the topic now instead of on the first publish (start-up checks). */
  connect(): Promise<void>;
}

interface Pending {
  event: UsageEvent;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The refusal the HTTP API sends when an event cannot be made durable: 503 with the catalogue's
 * `entitlement_unavailable` ("plan and allowance state is temporarily unavailable; retry with
 * backoff"), the code whose meaning is closest: the billing side of the service is unavailable,
 * the call was neither served nor charged, and retrying later will work. Not `upstream_error`
 * (502 names the company-data store) and not `internal_error` (not a bug). docs/billing.md.
 */
export function meteringUnavailable(cause: unknown): AppError {
  return new AppError('entitlement_unavailable', 'Usage metering is temporarily unavailable, so the call was not served and not charged. Retry with backoff.', { cause, retryAfterSeconds: 1 });
}

/**
 * The Kafka usage bus, producing side. kafkajs sends one request per send(), so concurrent
 * publish() calls are gathered into one send: while a send is in flight the next batch fills
 * up, and it goes as soon as the previous one is acknowledged (or after `lingerMs` when the
 * sink was idle). Each caller's promise settles with its batch: it resolves only once Kafka
 * acknowledged the batch with acks=-1 (every in-sync replica has it), and it rejects with
 * meteringUnavailable() otherwise, so the API never sends a 2xx for an event that is not
 * durable. The producer is idempotent (broker-side dedup of its own retries, key =
 * organization, so an organization's events stay in order on one partition).
 *
 * After a failed send the producer is thrown away and a new one (new producer id) is made:
 * an idempotent producer's sequence numbers after an unknown outcome could make the broker
 * take the next batch for a duplicate of the failed one and drop it while acknowledging it.
 */
export function createKafkaUsageSink(options: KafkaUsageSinkOptions): KafkaUsageSink {
  const { kafka, topic, logger } = options;
  const maxBatch = options.maxBatch ?? 1_000;
  const lingerMs = options.lingerMs ?? 2;
  const queue: Pending[] = [];
  let producer: Producer | undefined;
  let ready: Promise<Producer> | undefined;
  let inFlight: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const getProducer = () =>
    (ready ??= (async () => {
      await ensureTopics(kafka, [{ topic, numPartitions: options.partitions }]);
      const p = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
        // Long enough to ride out a broker restart or leader move, short enough that a caller
        // gets an answer (a 503) within about ten seconds when Kafka is really gone.
        retry: options.retry ?? { initialRetryTime: 200, retries: 6, maxRetryTime: 3_000 },
      });
      await p.connect();
      producer = p;
      return p;
    })().catch((err: unknown) => {
      ready = undefined;
      throw err;
    }));

  const discardProducer = () => {
    const old = producer;
    producer = undefined;
    ready = undefined;
    if (old) void old.disconnect().catch(() => {});
  };

  const flush = async (): Promise<void> => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    const batch = queue.splice(0, maxBatch);
    if (batch.length === 0) return;
    try {
      const p = await getProducer();
      await p.send({
        topic,
        acks: -1,
        messages: batch.map(({ event }) => ({ key: event.organizationId, value: JSON.stringify(event), headers: { 'usage-event-version': String(event.v) } })),
      });
      for (const pending of batch) pending.resolve();
    } catch (err) {
      logger.error('usage events not acknowledged by Kafka; refusing their calls', { err, events: batch.length });
      discardProducer();
      const refusal = meteringUnavailable(err);
      for (const pending of batch) pending.reject(refusal);
    }
  };

  const pump = () => {
    if (inFlight || queue.length === 0) return;
    inFlight = flush().finally(() => {
      inFlight = undefined;
      pump(); // what queued up meanwhile has waited long enough: send it now
    });
  };

  const schedule = () => {
    if (inFlight) return; // pump() runs when it lands
    if (queue.length >= maxBatch) return pump();
    timer ??= setTimeout(() => {
      timer = undefined;
      pump();
    }, lingerMs);
  };

  return {
    connect: async () => {
      await getProducer();
    },
    publish(event) {
      if (closed) return Promise.reject(meteringUnavailable(new Error('usage sink closed')));
      return new Promise<void>((resolve, reject) => {
        queue.push({ event, resolve, reject });
        schedule();
      });
    },
    async close() {
      closed = true;
      // Deliver what was accepted before closing: those callers are waiting for their answer.
      while (queue.length > 0 || inFlight) {
        pump();
        await inFlight;
      }
      if (timer) clearTimeout(timer);
      if (producer) await producer.disconnect().catch(() => {});
      producer = undefined;
      ready = undefined;
    },
  };
}
