export { usageEventSchema, type UsageEvent } from './usage-event.js';
export type { UsageSink } from './usage-sink.js';
export { createPostgresUsageSink } from './postgres-usage-sink.js';
