import type { Knex } from 'knex';
import { applyUsageBatch } from '../core/billing/apply-usage-batch.js';
import { rollOverDueAllowances } from '../core/billing/roll-over-period.js';
import type { Logger } from '../core/logging/index.js';
import type { UsageBacklog, UsageBatchOutcome, UsageBusConsumer, UsageConsumerFailure, UsageConsumerState } from '../core/usage/index.js';

export interface BillingWorkerDeps {
  db: Knex;
  consumer: UsageBusConsumer;
  logger: Logger;
  /** How often the calendar-month rollover sweep runs (flags of idle organizations clear). */
  rolloverIntervalMs?: number;
  /** Called after each committed batch (bench, tests). */
  onBatch?: (outcome: UsageBatchOutcome) => void;
}

export interface BillingWorkerStats {
  batches: number;
  applied: number;
  duplicates: number;
  deadLetters: number;
  /** When the last batch committed (this process); null before the first. */
  lastBatchAt: Date | null;
}

export interface BillingWorker {
  readonly bus: UsageBusConsumer['bus'];
  stats(): BillingWorkerStats;
  /** The consumer's state: `consuming` is the only healthy one. */
  state(): UsageConsumerState;
  /** The usage events waiting on the bus (UsageBusConsumer.backlog). */
  backlog(): Promise<UsageBacklog>;
  /**
   * Settles if the consumer stopped on its own for good (UsageBusConsumer.failed): nothing is
   * billed any more, so the process running the worker must end (then call stop()).
   */
  readonly failed: Promise<UsageConsumerFailure>;
  /** Drains the batch in flight (commits it and its position), then disconnects. */
  stop(): Promise<void>;
}

/**
 * The billing worker without its process: `billing-worker/main.ts` runs it alone, `npm start`
 * runs it in-process beside the API. The bus decides where batches come from; every batch is
 * applied by the same core function in one transaction.
 */
export async function startBillingWorker(deps: BillingWorkerDeps): Promise<BillingWorker> {
  const { db, consumer, logger } = deps;
  const stats: BillingWorkerStats = { batches: 0, applied: 0, duplicates: 0, deadLetters: 0, lastBatchAt: null };
  const bus = consumer.bus;

  const rollover = async () => {
    try {
      const moved = await rollOverDueAllowances(db);
      if (moved > 0) logger.info('allowances rolled over to the new month', { moved });
    } catch (err) {
      logger.error('rollover sweep failed; next sweep retries', { err });
    }
  };
  await rollover();
  const timer = setInterval(() => void rollover(), deps.rolloverIntervalMs ?? 15_000);
  timer.unref();

  const apply: Parameters<typeof consumer.start>[0] = async (trx, messages) => {
    const outcome = await applyUsageBatch(trx, messages, { bus });
    // Counted when the transaction commits: a rolled-back batch comes back and counts then.
    trx.executionPromise.then(
      () => {
        stats.batches += 1;
        stats.lastBatchAt = new Date();
        stats.applied += outcome.applied;
        stats.duplicates += outcome.duplicates;
        stats.deadLetters += outcome.deadLetters.length;
        for (const dead of outcome.deadLetters) logger.warn('usage message dead-lettered', { bus, ref: dead.ref, reason: dead.reason });
        deps.onBatch?.(outcome);
      },
      () => {},
    );
    return outcome;
  };
  try {
    await consumer.start(apply);
  } catch (err) {
    // Half started (say Kafka's dead-letter producer connected, then the subscribe failed):
    // close what did start, so the process ends on its own once the error is logged.
    clearInterval(timer);
    await consumer.stop().catch((stopErr: unknown) => logger.warn('could not stop the half-started usage consumer', { err: stopErr }));
    throw err;
  }
  logger.info('billing worker consuming', { bus });
  // No rollover sweeps for a worker that bills nothing: its process is about to end.
  const failed = consumer.failed.then((failure) => {
    clearInterval(timer);
    return failure;
  });

  return {
    bus,
    stats: () => ({ ...stats }),
    state: () => consumer.state(),
    backlog: () => consumer.backlog(),
    failed,
    async stop() {
      clearInterval(timer);
      await consumer.stop();
      logger.info('billing worker stopped', { ...stats });
    },
  };
}
