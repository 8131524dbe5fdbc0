import type { BatchInFlight } from './batches-in-flight.js';
import type { Knex } from 'knex';
import type { UsageConsumerFailure } from './consumer-failure.js';

/** One message as a bus delivered it, before parsing: a poison message must still be carried. */
export interface UsageBusMessage {
  /** Kafka: the message bytes; Postgres bus: the jsonb payload (already an object). */
  value: Buffer | string | object | null;
  /** Where it came from, for logs and dead letters: `usage-events/3@1234`, `usage_bus_batches#42/3`. */
  ref: string;
}

export interface DeadLetter {
  ref: string;
  /** The message as text, exactly as received where possible. */
  value: string;
  reason: string;
  /** When the billing worker replays it by itself (an event a little ahead of its clock). */
  replayAfter?: Date;
}

export interface UsageBatchOutcome {
  /** Usage events that produced a ledger row now. */
  applied: number;
  /** Their event ids (end-to-end lag measurement, logs). */
  appliedEventIds: string[];
  /** Events already in the ledger (redelivery, replay, or twice in one batch). */
  duplicates: number;
  deadLetters: DeadLetter[];
  /** Duplicates whose content differs from the event charged under their id (a producer reusing
   * an id, or a message altered on the way): dropped like any duplicate, and said (a warn line). */
  conflicts?: UsageConflict[];
}

export interface UsageConflict {
  eventId: string;
  /** The dropped message (`topic/partition@offset`, `usage_bus_batches#seq/i`). */
  ref: string;
  /** Each field that differs, as `field: charged → dropped`. */
  differences: string;
}

/** Applies one batch inside the caller's transaction; the bus commits its position after it. */
export type ApplyUsageBatch = (trx: Knex.Transaction, messages: UsageBusMessage[]) => Promise<UsageBatchOutcome>;

/**
 * The consuming side of a usage bus (Kafka, or the Postgres table). It hands batches to
 * `apply` inside a database transaction and moves its position (offsets, deleted rows) only
 * once that transaction has committed, so a crash anywhere means redelivery, never loss; the
 * ledger's unique event id turns the redelivery into a no-op.
 */
export interface UsageBusConsumer {
  readonly bus: 'postgres' | 'kafka';
  /** Resolves once consuming has begun; batches keep flowing until stop(). */
  start(apply: ApplyUsageBatch): Promise<void>;
  /** Finishes the batch in flight (its transaction and position commit), then disconnects. */
  stop(): Promise<void>;
  /**
   * Settles, with why, if consuming ends on its own and nothing will start it again (Kafka: a
   * crash kafkajs does not restart from; either bus: a fault in the code). Never settles after
   * stop(). Whoever runs the consumer must not stay up without it: paid calls would go on being
   * served, never charged, and no allowance flag would ever stop them. Call stop() to release
   * what is still open.
   */
  readonly failed: Promise<UsageConsumerFailure>;
  /** Where consuming stands now (the billing worker's /healthz). */
  state(): UsageConsumerState;
  /** The usage events published and not yet applied; may be slow or fail when the bus is away. */
  backlog(): Promise<UsageBacklog>;
  /**
   * The oldest batch transaction still open (from its BEGIN, the claim included, to its COMMIT):
   * when it began and how long it has been open; null when none is. The billing worker's stall
   * watchdog reads it.
   */
  batchInFlight(): BatchInFlight | null;
}

/**
 * `consuming`: the only healthy one. `starting`: before start() has joined (Kafka: its group).
 * `retrying`: batches fail, or kafkajs restarts its crashed consumer, for a reason that may
 * pass (the database, the broker). `stopped`: stop() was called. `failed`: see `failed`.
 */
export type UsageConsumerState = 'starting' | 'consuming' | 'retrying' | 'stopped' | 'failed';

export interface UsageBacklog {
  /** Usage events published and not yet applied (Kafka: by this consumer group). */
  events: number;
  /** Postgres bus: the published batches (rows of usage_bus_batches) holding them. */
  batches?: number;
  /** Postgres bus: when the oldest of them was published; null when none waits. */
  oldestEnqueuedAt?: string | null;
}
