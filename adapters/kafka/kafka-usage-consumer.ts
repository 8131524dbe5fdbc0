import { Partitioners, type Consumer, type Kafka, type KafkaMessage, type Producer } from 'kafkajs';
import type { Knex } from 'knex';
import type { Logger } from '../../core/logging/index.js';
import { applyOneByOne, isDataError, type ApplyUsageBatch, type DeadLetter, type UsageBusConsumer } from '../../core/usage/index.js';
import { ensureTopics } from './create-kafka.js';
import { kafkaUnreachableError } from './kafka-unreachable.js';

export interface KafkaUsageConsumerOptions {
  kafka: Kafka;
  db: Knex;
  topic: string;
  deadLetterTopic: string;
  groupId: string;
  /** Partitions of the topic when we have to create it. */
  partitions: number;
  logger: Logger;
  /** Most messages applied in one transaction. */
  maxBatch?: number;
  /** Partitions applied side by side in this process (each in its own transaction). */
  partitionsConsumedConcurrently?: number;
}

/**
 * The Kafka usage bus, consuming side: one consumer group shared by every worker replica.
 * kafkajs hands us a partition's fetched messages; each chunk of them is applied in one
 * Postgres transaction, and only after it commits do we (1) forward its dead letters to the
 * dead-letter topic and (2) commit the offset past it. A crash before (2) redelivers the chunk,
 * which the ledger turns into a no-op; a poison message is dead-lettered and passed over, so
 * it never blocks its partition. A chunk that fails on one message's own data (a time Postgres
 * cannot store, say) is applied again one message at a time, as the Postgres bus does, and only
 * that message is dead-lettered: kafkajs would otherwise fetch the same chunk for ever.
 */
export function createKafkaUsageConsumer(options: KafkaUsageConsumerOptions): UsageBusConsumer {
  const { kafka, db, logger, topic } = options;
  const maxBatch = options.maxBatch ?? 2_000;
  let consumer: Consumer | undefined;
  let deadLetters: Producer | undefined;

  const applyChunk = async (apply: ApplyUsageBatch, partition: number, messages: KafkaMessage[]) => {
    const busMessages = messages.map((m) => ({ value: m.value, ref: `${topic}/${partition}@${m.offset}` }));
    let dead: DeadLetter[];
    try {
      dead = (await db.transaction((trx) => apply(trx, busMessages))).deadLetters;
    } catch (err) {
      if (!isDataError(err)) throw err;
      logger.warn('usage chunk failed on its own data; applying it one message at a time', { err, partition, messages: messages.length });
      dead = await db.transaction((trx) => applyOneByOne(trx, apply, busMessages, 'kafka', logger));
    }
    if (dead.length > 0) {
      await deadLetters!.send({
        topic: options.deadLetterTopic,
        acks: -1,
        messages: dead.map((d) => ({
          key: d.ref,
          value: d.value,
          headers: { 'dead-letter-reason': d.reason, 'dead-letter-source': d.ref },
        })),
      });
    }
  };

  return {
    bus: 'kafka',
    async start(apply) {
      // kafkajs retries connecting for some seconds first; then the start-up's one line says
      // which broker did not answer and which variable names it.
      let c: Consumer;
      try {
        await ensureTopics(kafka, [
          { topic, numPartitions: options.partitions },
          { topic: options.deadLetterTopic, numPartitions: 1 },
        ]);
        deadLetters = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
        await deadLetters.connect();
        // A short session: a worker killed with -9 hands its partitions over in about ten seconds.
        // maxWaitTime bounds how long stop() waits for an idle fetch to return.
        c = kafka.consumer({ groupId: options.groupId, sessionTimeout: 10_000, heartbeatInterval: 2_000, maxWaitTimeInMs: 1_000 });
        consumer = c;
        await c.connect();
        // A new group starts at the beginning: events produced before the first worker ran are
        // still owed.
        await c.subscribe({ topic, fromBeginning: true });
      } catch (err) {
        throw kafkaUnreachableError(err) ?? err;
      }
      await c.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: options.partitionsConsumedConcurrently ?? 2,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
          for (let i = 0; i < batch.messages.length; i += maxBatch) {
            // On rebalance or stop, leave the rest: its new owner (or our next start) gets it.
            if (!isRunning() || isStale()) return;
            const chunk = batch.messages.slice(i, i + maxBatch);
            await applyChunk(apply, batch.partition, chunk);
            const last = chunk[chunk.length - 1]!.offset;
            resolveOffset(last);
            await c.commitOffsets([{ topic: batch.topic, partition: batch.partition, offset: (BigInt(last) + 1n).toString() }]);
            await heartbeat();
          }
        },
      });
      logger.info('kafka usage consumer running', { topic, groupId: options.groupId });
    },
    async stop() {
      // kafkajs waits for the batch in flight to finish (its transaction and offset commit).
      await consumer?.disconnect();
      await deadLetters?.disconnect();
      consumer = undefined;
      deadLetters = undefined;
    },
  };
}
