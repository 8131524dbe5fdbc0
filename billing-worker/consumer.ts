import type { Knex } from 'knex';
import { createKafka, createKafkaUsageConsumer } from '../adapters/kafka/index.js';
import { chooseUsageBus, type Config } from '../core/config/index.js';
import type { Logger } from '../core/logging/index.js';
import { createPostgresUsageConsumer, type UsageBusConsumer } from '../core/usage/index.js';

export interface UsageConsumerDeps {
  config: Config;
  db: Knex;
  connectionString: string;
  logger: Logger;
}

/** The bus chooseUsageBus names, said once at start: KAFKA_BROKERS set, the Kafka consumer group; unset, the Postgres bus (embedded default). */
export function createUsageConsumer({ config, db, connectionString, logger }: UsageConsumerDeps): UsageBusConsumer {
  if (chooseUsageBus(config) === 'kafka') {
    logger.info('reading usage events from Kafka', { bus: 'kafka', brokers: config.KAFKA_BROKERS, topic: config.KAFKA_USAGE_TOPIC, group: config.KAFKA_CONSUMER_GROUP });
    return createKafkaUsageConsumer({
      kafka: createKafka({ brokers: config.KAFKA_BROKERS!, clientId: `${config.KAFKA_CLIENT_ID}-billing-worker`, logger }),
      db,
      topic: config.KAFKA_USAGE_TOPIC,
      deadLetterTopic: config.KAFKA_DEAD_LETTER_TOPIC,
      groupId: config.KAFKA_CONSUMER_GROUP,
      partitions: config.KAFKA_PARTITIONS,
      logger,
    });
  }
  logger.info('reading usage events from the Postgres bus', { bus: 'postgres' });
  // Two claim loops: one applies while the other waits on Postgres (SKIP LOCKED keeps them apart).
  return createPostgresUsageConsumer({ db, connectionString, logger, concurrency: 2 });
}
