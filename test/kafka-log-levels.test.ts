// kafkajs logs some ordinary start-up races at ERROR; our log creator says them at info, so an
// error line from Kafka means something is wrong. Run against the suite's real broker.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createKafka, ensureTopics } from '../adapters/kafka/index.js';
import { createLogger } from '../core/logging/index.js';
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
});
