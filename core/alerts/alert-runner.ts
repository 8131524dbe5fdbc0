import type { Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { deliverDueWebhooks, type DeliveryOptions } from './deliver-webhooks.js';
import { evaluateThresholds } from './evaluate-thresholds.js';

export interface AlertRunner {
  /** One evaluation and one delivery pass (tests call it instead of waiting for the timer). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

// While PostgreSQL is down every pass fails: one error line with its stack every 5 s buried the
// rest of the log. The first failure is said (its message), then at most once a minute while
// they go on, and one line when a pass succeeds again.
const STILL_FAILING_EVERY_MS = 60_000;

/**
 * Evaluates thresholds and sends due webhooks every `intervalMs`, one pass at a time (a slow
 * receiver never stacks passes up). Several processes may run it: firing and sending are
 * claimed in the database.
 */
export function startAlertRunner(options: { db: Db; logger: Logger; intervalMs: number; delivery?: DeliveryOptions; stillFailingEveryMs?: number }): AlertRunner {
  const { db, logger } = options;
  const stillFailingEveryMs = options.stillFailingEveryMs ?? STILL_FAILING_EVERY_MS;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  let failing: { since: Date; saidAt: number; failures: number } | null = null;
  const pass = async () => {
    try {
      const evaluation = await evaluateThresholds(db);
      for (const f of evaluation.fired) logger.info('alert threshold crossed', f);
      const sent = await deliverDueWebhooks(db, { logger, ...options.delivery });
      if (sent.delivered + sent.retrying + sent.failed > 0) logger.info('webhooks sent', { ...sent });
      if (failing) {
        logger.info(`alert passes succeed again after ${failing.failures} failed since ${failing.since.toISOString()}`, { failures: failing.failures, since: failing.since.toISOString() });
        failing = null;
      }
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      const at = Date.now();
      if (!failing) {
        failing = { since: new Date(at), saidAt: at, failures: 1 };
        logger.error('alert pass failed; the next pass retries', { error });
        return;
      }
      failing.failures += 1;
      if (at - failing.saidAt < stillFailingEveryMs) return;
      failing.saidAt = at;
      logger.error(`alert passes still failing since ${failing.since.toISOString()}`, { error, failures: failing.failures, since: failing.since.toISOString() });
    }
  };
  const runOnce = () => (running = running.then(pass));
  const timer = setInterval(() => {
    if (!stopped) void runOnce();
  }, options.intervalMs);
  timer.unref();
  return {
    runOnce,
    stop: async () => {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
