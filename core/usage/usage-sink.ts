import type { UsageEvent } from './usage-event.js';

/**
 * Where a served call's usage goes. `publish` resolves only once the event is durable (in
 * Postgres, acknowledged by Kafka, or in a local spool): callers send the 2xx only after it
 * resolves, so no call is ever served unbilled. It rejects with AppError when it cannot make
 * the event durable.
 */
export interface UsageSink {
  publish(event: UsageEvent): Promise<void>;
  close(): Promise<void>;
}
