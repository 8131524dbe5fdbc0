import { randomUUID } from 'node:crypto';
import type { Kafka } from 'kafkajs';
import { inject } from 'vitest';
import { canControlKafka, restartKafkaBroker, startKafkaBroker, stopKafkaBroker, type StopOptions } from '../services/kafka-control.js';

/** The run's brokers; a clear failure when the run was started with TEST_SERVICES=postgres. */
export function kafkaBrokers(): string[] {
  const brokers = inject('kafkaBrokers');
  if (!brokers) throw new Error('this test needs Kafka: run without TEST_SERVICES=postgres');
  return brokers.split(',');
}

/** Whether a test may stop and start the broker (not when KAFKA_BROKERS names one we do not own). */
export function kafkaIsControllable(): Promise<boolean> {
  return canControlKafka(inject('kafkaControlFile'));
}

export function stopKafka(options?: StopOptions): Promise<void> {
  return stopKafkaBroker(inject('kafkaControlFile'), options);
}

/** Starts it again on the same address and log directory; resolves once it serves requests. */
export function startKafka(): Promise<void> {
  return startKafkaBroker(inject('kafkaControlFile'));
}

export function restartKafka(options?: StopOptions): Promise<void> {
  return restartKafkaBroker(inject('kafkaControlFile'), options);
}

/**
 * A fresh usage topic (one partition), its dead-letter topic taking messages of at most
 * `deadLetterMaxBytes` (its `max.message.bytes`), and a fresh consumer group.
 */
export async function topicsWithADeadLetterLimit(kafka: Kafka, prefix: string, deadLetterMaxBytes: number): Promise<{ topic: string; deadLetterTopic: string; groupId: string }> {
  const suffix = randomUUID().slice(0, 8);
  const topic = `${prefix}-${suffix}`;
  const deadLetterTopic = `${topic}-dlq`;
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        { topic, numPartitions: 1 },
        { topic: deadLetterTopic, numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: String(deadLetterMaxBytes) }] },
      ],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
  return { topic, deadLetterTopic, groupId: `${prefix}-${suffix}` };
}

/**
 * Usage topics on which a billing worker's consumer crashes in a way kafkajs does not restart
 * from, as in production: a dead-letter topic that takes at most 100 bytes, less than any dead
 * letter with its headers, even the truncated stand-in with no value that the consumer sends for
 * one too large; so the dead letter of any poison message is refused (MESSAGE_TOO_LARGE is not
 * retriable). `poison()` publishes that message; `groupId` is a fresh consumer group.
 */
export async function topicsWithAnUnrestartableCrash(kafka: Kafka, prefix: string): Promise<{ topic: string; deadLetterTopic: string; groupId: string; poison(): Promise<void> }> {
  const topics = await topicsWithADeadLetterLimit(kafka, prefix, 100);
  return {
    ...topics,
    async poison() {
      const producer = kafka.producer();
      await producer.connect();
      try {
        await producer.send({ topic: topics.topic, messages: [{ key: 'nobody', value: 'not a usage event' }] });
      } finally {
        await producer.disconnect();
      }
    },
  };
}
