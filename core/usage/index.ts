export { usageEventSchema, type UsageEvent } from './usage-event.js';
export type { UsageSink } from './usage-sink.js';
export { createPostgresUsageSink, meteringUnavailable, USAGE_PUBLISH_DEADLINE_MS, type PostgresUsageSinkOptions } from './postgres-usage-sink.js';
export { createBatchPublisher, type BatchPublisher } from './batch-publisher.js';
export type { ApplyUsageBatch, DeadLetter, UsageBatchOutcome, UsageBusConsumer, UsageBusMessage } from './usage-bus.js';
export { batchMessages, createPostgresUsageConsumer, type PostgresUsageConsumerOptions } from './postgres-usage-consumer.js';
export { messageText, parseUsageMessage } from './parse-usage-message.js';
export { applyOneByOne, databaseReason, deadLetterRow, isDataError } from './apply-one-by-one.js';
export { settleRefusedCalls, type RecordRefusedCalls } from './refused-calls.js';
