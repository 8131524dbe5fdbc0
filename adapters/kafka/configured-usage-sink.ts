import { chooseUsageBus, type Config } from '../../core/config/index.js';
import { errorMessage } from '../../core/errors/index.js';
import type { OpenDatabase } from '../../core/db/index.js';
import type { Logger } from '../../core/logging/index.js';
import { recordRefusedCalls } from '../../core/billing/index.js';
import { createPostgresUsageSink, type UsageEvent, type UsageSink } from '../../core/usage/index.js';
import { createKafka } from './create-kafka.js';
import { kafkaUnreachableError } from './kafka-unreachable.js';
import { createKafkaUsageSink } from './kafka-usage-sink.js';

/**
 * The usage sink a process should use: the bus chooseUsageBus names (Kafka when KAFKA_BROKERS is
 * set, else the Postgres bus), said once at start. Shaped as api/compose.ts's UsageSinkFactory.
 * Kafka is connected in the background: a broker that is down at start-up must not stop the API
 * from starting; its calls are refused (503) until Kafka answers.
 */
export function configuredUsageSink({ config, database, logger }: { config: Config; database: OpenDatabase; logger: Logger }): UsageSink {
  // A call refused while its event may still reach the bus gets a `refused` ledger row, so it is not charged.
  const recordRefused = (events: UsageEvent[]) => recordRefusedCalls(database.db, events);
  if (chooseUsageBus(config) === 'postgres') {
    logger.info('usage events go to the Postgres bus', { bus: 'postgres' });
    return createPostgresUsageSink(database.db, { logger, recordRefused });
  }
  logger.info('usage events go to Kafka', { bus: 'kafka', brokers: config.KAFKA_BROKERS, topic: config.KAFKA_USAGE_TOPIC });
  const sink = createKafkaUsageSink({
    kafka: createKafka({ brokers: config.KAFKA_BROKERS!, clientId: `${config.KAFKA_CLIENT_ID}-usage`, logger }),
    topic: config.KAFKA_USAGE_TOPIC,
    partitions: config.KAFKA_PARTITIONS,
    logger,
    recordRefused,
  });
  // kafkajs's own lines say how each attempt failed; this one says what it means.
  sink.connect().catch((err: unknown) =>
    logger.warn('Kafka not reachable yet; paid calls are refused until it is', { reason: kafkaUnreachableError(err)?.message ?? errorMessage(err) }),
  );
  return sink;
}
