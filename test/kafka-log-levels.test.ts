// kafkajs logs some ordinary start-up races at ERROR; our log creator says them at info, so an
// error line from Kafka means something is wrong. Run against the suite's real broker.
import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import { createKafka, ensureTopics } from '../adapters/kafka/index.js';
import { createLogger } from '../core/logging/index.js';
import { waitFor } from './billing-fixtures.js';
import { kafkaBrokers } from './support/kafka.js';

describe('the kafkajs log lines', () => {
  it('when two processes create the same topic at once then "Topic creation errors" is logged at info, not error', async () => {
    const lines: { level: string; msg: string; error?: string }[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => void lines.push(JSON.parse(line) as { level: string; msg: string }) });
    const topic = `usage-events-race-${randomUUID().slice(0, 8)}`;
    // Two clients, as two processes starting together: both see no topic, both create it.
    const clients = [1, 2].map((n) => createKafka({ brokers: kafkaBrokers(), clientId: `log-levels-${n}`, logger }));
    await Promise.all(clients.map((kafka) => ensureTopics(kafka, [{ topic, numPartitions: 1 }])));

    const race = lines.filter((l) => l.error === 'Topic creation errors');
    expect(race.length, JSON.stringify(lines.filter((l) => l.level !== 'debug'))).toBeGreaterThan(0);
    expect(race.map((l) => l.level)).toEqual(race.map(() => 'info'));
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  it('when a second member joins a running group, and an idempotent producer with our limited retries starts, then the rebalance is info, the retries warning debug, and nothing is an error', async () => {
    const lines: { level: string; msg: string; error?: string }[] = [];
    const logger = createLogger({ level: 'debug', write: (line) => void lines.push(JSON.parse(line) as { level: string; msg: string }) });
    const kafka = createKafka({ brokers: kafkaBrokers(), clientId: 'log-levels-group', logger });
    const topic = `usage-events-group-${randomUUID().slice(0, 8)}`;
    await ensureTopics(kafka, [{ topic, numPartitions: 2 }]);
    const groupId = `log-levels-${randomUUID()}`;
    const members = [1, 2].map(() => kafka.consumer({ groupId, heartbeatInterval: 100 }));
    // As the usage sink makes its producers (kafka-usage-sink.ts).
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, createPartitioner: Partitioners.DefaultPartitioner, retry: { retries: 6 } });
    try {
      await producer.connect();
      for (const member of members) {
        await member.connect();
        await member.subscribe({ topic, fromBeginning: true });
        await member.run({ eachMessage: async () => {} });
        // Joined before the next one comes: its heartbeats then meet the rebalance.
        await waitFor('the member joined', async () => lines.filter((l) => /joined/i.test(l.msg)).length >= members.indexOf(member) + 1, 30_000);
      }
      await waitFor('the first member rejoined', async () => lines.some((l) => l.error === 'The group is rebalancing, so a rejoin is needed'), 30_000);
    } finally {
      await Promise.all([...members.map((m) => m.disconnect()), producer.disconnect()]);
    }
    const rebalancing = lines.filter((l) => l.error === 'The group is rebalancing, so a rejoin is needed');
    expect(rebalancing.map((l) => l.level)).toEqual(rebalancing.map(() => 'info'));
    const retries = lines.filter((l) => l.msg.startsWith('Limiting retries for the idempotent producer'));
    expect(retries.map((l) => l.level)).toEqual(['debug']);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
  }, 90_000);
});
