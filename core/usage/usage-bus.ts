import type { Knex } from 'knex';

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
}

export interface UsageBatchOutcome {
  /** Usage events that produced a ledger row now. */
  applied: number;
  /** Their event ids (end-to-end lag measurement, logs). */
  appliedEventIds: string[];
  /** Events already in the ledger (redelivery, replay, or twice in one batch). */
  duplicates: number;
  deadLetters: DeadLetter[];
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
}
