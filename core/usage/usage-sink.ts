import type { UsageEvent } from './usage-event.js';

/**
 * Where a served call's usage goes. `publish` resolves only once the event is durable (in
 * Postgres, acknowledged by Kafka, or in a local spool): callers send the 2xx only after it
 * resolves, so no call is ever served unbilled. It rejects with AppError when it cannot make
 * the event durable.
 */
export interface UsageSink {
  publish(event: UsageEvent): Promise<void>;
  /**
   * False while a publish would be refused at once (the Kafka producer not connected: at
   * start-up, or through an outage, found by a failed send or, with no calls coming, by the
   * sink's own checks), for /healthz. Absent on the Postgres bus, whose health is the
   * database's.
   */
  reachable?(): boolean;
  close(): Promise<void>;
}
