import type { BatchInFlight } from '../core/usage/index.js';

export interface StallWatchdogOptions {
  /** The oldest batch transaction still open (UsageBusConsumer.batchInFlight). */
  inFlight(): BatchInFlight | null;
  /** BILLING_BATCH_STALL_MS. */
  stallMs: number;
  /** Called once, with when the stalled batch began and how long it has been in flight. */
  onStall(since: Date, inFlightMs: number): void;
}

/**
 * Watches for a batch that never ends. A query waiting on a connection that stopped answering
 * (the server's host frozen, a network path dropping packets without a RST) waits for ever: no
 * error, no retry, the consumer still `consuming`, nothing billed. Nothing else notices: TCP
 * keepalive sends no probe while a query waits for its acknowledgement, and /healthz's
 * SELECT 1 may run on another connection, one that answers. Checks a few times per limit;
 * returns how to stop watching.
 */
export function watchForStall(options: StallWatchdogOptions): () => void {
  const timer = setInterval(
    () => {
      const oldest = options.inFlight();
      if (oldest === null || oldest.openMs < options.stallMs) return;
      clearInterval(timer);
      options.onStall(oldest.since, oldest.openMs);
    },
    Math.min(1_000, options.stallMs / 4),
  );
  timer.unref();
  return () => clearInterval(timer);
}
