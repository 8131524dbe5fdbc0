export { createKafka, ensureTopics, type KafkaClientOptions } from './create-kafka.js';
export { createKafkaUsageSink, PUBLISH_DEADLINE_MS, type KafkaUsageSink, type KafkaUsageSinkOptions } from './kafka-usage-sink.js';
export { createKafkaUsageConsumer, type KafkaUsageConsumerOptions } from './kafka-usage-consumer.js';
export { configuredUsageSink } from './configured-usage-sink.js';
