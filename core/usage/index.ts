export { usageEventSchema, type UsageEvent } from './usage-event.js';
export type { UsageSink } from './usage-sink.js';
