import type { Knex } from 'knex';
import { applyUsageBatch } from '../core/billing/apply-usage-batch.js';
import { replayDueDeadLetters } from '../core/billing/replay-due-dead-letters.js';
import { rollOverDueAllowances } from '../core/billing/roll-over-period.js';
import { recordAudit } from '../core/dashboard-auth/index.js';
import { databaseUnavailableReason } from '../core/db/index.js';
import type { Logger } from '../core/logging/index.js';
import { UsageConsumerFailure, type UsageBacklog, type UsageBatchOutcome, type UsageBusConsumer, type UsageConsumerState } from '../core/usage/index.js';
import { watchForStall } from './stall-watchdog.js';

export interface BillingWorkerDeps {
  db: Knex;
  consumer: UsageBusConsumer;
  logger: Logger;
  /** How often the sweep runs: the calendar-month rollover (flags of idle organizations clear),
   * then the replay of dead letters whose time has come (events a little ahead of our clock). */
  rolloverIntervalMs?: number;
  /** Called after each committed batch (bench, tests). */
  onBatch?: (outcome: UsageBatchOutcome) => void;
  /**
   * BILLING_BATCH_STALL_MS: a batch in flight longer than this ends the worker as `failed` does,
   * its state `stalled` (stall-watchdog.ts). Unset: no watchdog (tests, the bench).
   */
  batchStallMs?: number;
}

export interface BillingWorkerStats {
  batches: number;
  applied: number;
  duplicates: number;
  deadLetters: number;
  /** When the last batch committed (this process); null before the first. */
  lastBatchAt: Date | null;
}

/**
 * The consumer's state, or `stalled`: a batch has been in flight longer than batchStallMs (a
 * database connection that stopped answering, most likely), so the worker is ending.
 */
export type BillingWorkerState = UsageConsumerState | 'stalled';

export interface BillingWorker {
  readonly bus: UsageBusConsumer['bus'];
  stats(): BillingWorkerStats;
  /** `consuming` is the only healthy one. */
  state(): BillingWorkerState;
  /** When the batch that stalled began; null unless the state is `stalled`. */
  stalledSince(): Date | null;
  /** The usage events waiting on the bus (UsageBusConsumer.backlog). */
  backlog(): Promise<UsageBacklog>;
  /**
   * Settles if the consumer stopped on its own for good (UsageBusConsumer.failed), or a batch
   * stalled: nothing is billed any more, so the process running the worker must end (then call
   * stop()). Its batches come back to the next worker, and any that did commit charge
   * nothing twice: the ledger takes each event id once.
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

  const sweepOnce = async () => {
    try {
      const moved = await rollOverDueAllowances(db);
      if (moved > 0) logger.info('allowances rolled over to the new month', { moved });
      // After the rollover: an event of a month just begun is charged in that month's allowance.
      const replayed = await replayDueDeadLetters(db, { audit: recordAudit });
      if (replayed.length > 0) {
        const count = (outcome: string) => replayed.filter((r) => r.outcome === outcome).length;
        const tally = { charged: count('charged'), alreadyCharged: count('already_charged'), stillFailing: count('still_failing') };
        if (tally.stillFailing > 0) logger.warn('dead letters whose time had come replayed; some are still refused and left to an operator (cli billing dead-letters)', { ...tally, refused: replayed.filter((r) => r.outcome === 'still_failing').map((r) => ({ id: r.id, reason: r.reason })) });
        else logger.info('dead letters whose time had come replayed', tally);
      }
    } catch (err) {
      // A database away is said as that, once in a while (the sweep runs every 15 s), not in
      // knex's words ("The pool is probably full. Are you missing a .transacting(trx) call?").
      const unavailable = databaseUnavailableReason(err);
      if (unavailable) logger.warnRepeating('rollover sweep', `rollover sweep failed: ${unavailable}; next sweep retries`);
      else logger.error('rollover sweep failed; next sweep retries', { err });
    }
  };
  // One sweep at a time (a replay of many due dead letters can outlast the interval), and the
  // one under way is waited for on stop, so that its transaction is not cut by the pool's close.
  let sweeping: Promise<void> | undefined;
  const sweep = () => (sweeping ??= sweepOnce().finally(() => (sweeping = undefined)));
  await sweep();
  const timer = setInterval(() => void sweep(), deps.rolloverIntervalMs ?? 15_000);
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
        // Not a dead letter: the first of them was charged, and charging this one too would
        // charge one call twice. Said, so that a producer reusing ids is seen.
        for (const c of outcome.conflicts ?? []) {
          logger.warn('usage event id repeated with different content: the first was charged, this one dropped', { bus, eventId: c.eventId, ref: c.ref, differences: c.differences });
        }
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

  let stalledSince: Date | null = null;
  let stalled!: (failure: UsageConsumerFailure) => void;
  const stall = new Promise<UsageConsumerFailure>((resolve) => (stalled = resolve));
  const stallMs = deps.batchStallMs;
  const stopWatching =
    stallMs === undefined
      ? () => {}
      : watchForStall({
          inFlight: () => consumer.batchInFlight(),
          stallMs,
          onStall(since, inFlightMs) {
            stalledSince = since;
            stalled(new UsageConsumerFailure(`a usage batch has been in flight ${Math.floor(inFlightMs / 1000)} s (BILLING_BATCH_STALL_MS allows ${stallMs / 1000} s): likely a database connection that stopped answering`));
          },
        });
  // No rollover sweeps for a worker that bills nothing: its process is about to end.
  const failed = Promise.race([consumer.failed, stall]).then((failure) => {
    clearInterval(timer);
    stopWatching();
    return failure;
  });

  return {
    bus,
    stats: () => ({ ...stats }),
    state: () => (stalledSince ? 'stalled' : consumer.state()),
    stalledSince: () => stalledSince,
    backlog: () => consumer.backlog(),
    failed,
    async stop() {
      clearInterval(timer);
      // Still watched while it drains: a batch stalled on a connection that stopped answering
      // would hold the stop for ever, and the process must learn it (`failed` settles).
      await Promise.all([consumer.stop(), sweeping]);
      stopWatching();
    },
  };
}
