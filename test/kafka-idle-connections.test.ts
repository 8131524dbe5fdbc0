// kafkajs 2.2.4 keeps each broker connection in a 1 ms timer loop (adapters/kafka/
// request-queue-idle-fix.ts); createKafka stops it. Against the suite's real broker.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import { Partitioners } from 'kafkajs';
import { afterEach, describe, expect, it } from 'vitest';
import { createKafka, ensureTopics } from '../adapters/kafka/index.js';
import { createLogger } from '../core/logging/index.js';
import { kafkaBrokers } from './support/kafka.js';

type Queue = { prototype: { checkPendingRequests(this: unknown): void } };
const RequestQueue = createRequire(import.meta.url)('kafkajs/src/network/requestQueue/index.js') as Queue;
const original = RequestQueue.prototype.checkPendingRequests;
afterEach(() => {
  RequestQueue.prototype.checkPendingRequests = original;
});

describe('idle kafkajs connections', () => {
  it('when a producer has sent and then sits idle then its connections do not check their queues every millisecond, and later sends, one at a time in flight, all land', async () => {
    const kafka = createKafka({ brokers: kafkaBrokers(), clientId: 'idle-connections', logger: createLogger({ level: 'silent' }) });
    const topic = `idle-connections-${randomUUID().slice(0, 8)}`;
    await ensureTopics(kafka, [{ topic, numPartitions: 1 }]);
    // As the usage sink makes its producers: one request in flight, so the others queue.
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    try {
      await producer.send({ topic, acks: -1, messages: [{ value: 'first' }] });
      let checks = 0;
      RequestQueue.prototype.checkPendingRequests = function counted(this: unknown) {
        checks++;
        original.call(this);
      };
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      // kafkajs as released: ~1,000 a second per connection. Answers to its own metadata
      // requests may still check, a few times.
      expect(checks).toBeLessThan(20);

      // The queue still moves when requests wait for the one in flight.
      await Promise.all(Array.from({ length: 20 }, (_, i) => producer.send({ topic, acks: -1, messages: [{ value: `burst ${i}` }] })));
      const admin = kafka.admin();
      await admin.connect();
      try {
        const [offsets] = await admin.fetchTopicOffsets(topic);
        expect(Number(offsets!.high)).toBe(21);
      } finally {
        await admin.disconnect();
      }
    } finally {
      await producer.disconnect();
    }
  });
});
