import { Partitioners, type Kafka, type Producer } from 'kafkajs';
import type { Logger } from '../../core/logging/index.js';
import { createBatchPublisher, meteringUnavailable, type UsageEvent, type UsageSink } from '../../core/usage/index.js';
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

/**
 * The Kafka usage bus, producing side. kafkajs sends one request per send(), so concurrent
 * publish() calls are gathered into one send (core/usage batch-publisher). Each caller's
 * promise resolves only once Kafka acknowledged its batch with acks=-1 (every in-sync replica
 * has it), and rejects with meteringUnavailable() (503 entitlement_unavailable) otherwise, so
 * the API never sends a 2xx for an event that is not durable. The producer is idempotent
 * (the broker drops duplicates of its own retries); key = organization, so an organization's
 * events stay in order on one partition.
 *
 * After a failed send the producer is thrown away and a new one (new producer id) is made:
 * an idempotent producer's sequence numbers after an unknown outcome could make the broker
 * take the next batch for a duplicate of the failed one and drop it while acknowledging it.
 */
export function createKafkaUsageSink(options: KafkaUsageSinkOptions): KafkaUsageSink {
  const { kafka, topic, logger } = options;
  let producer: Producer | undefined;
  let ready: Promise<Producer> | undefined;
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

  const batches = createBatchPublisher<UsageEvent>(
    async (events) => {
      try {
        const p = await getProducer();
        await p.send({
          topic,
          acks: -1,
          messages: events.map((event) => ({ key: event.organizationId, value: JSON.stringify(event), headers: { 'usage-event-version': String(event.v) } })),
        });
      } catch (err) {
        logger.error('usage events not acknowledged by Kafka; refusing their calls', { err, events: events.length });
        discardProducer();
        throw meteringUnavailable(err);
      }
    },
    { maxBatch: options.maxBatch ?? 1_000, lingerMs: options.lingerMs ?? 2 },
  );

  return {
    connect: async () => {
      await getProducer();
    },
    publish(event) {
      if (closed) return Promise.reject(meteringUnavailable(new Error('usage sink closed')));
      return batches.add(event);
    },
    async close() {
      closed = true;
      // Deliver what was accepted before closing: those callers are waiting for their answer.
      await batches.drain();
      if (producer) await producer.disconnect().catch(() => {});
      producer = undefined;
      ready = undefined;
    },
  };
}
