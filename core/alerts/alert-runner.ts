import type { Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { deliverDueWebhooks, type DeliveryOptions } from './deliver-webhooks.js';
import { evaluateThresholds } from './evaluate-thresholds.js';

export interface AlertRunner {
  /** One evaluation and one delivery pass (tests call it instead of waiting for the timer). */
  runOnce(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Evaluates thresholds and sends due webhooks every `intervalMs`, one pass at a time (a slow
 * receiver never stacks passes up). Several processes may run it: firing and sending are
 * claimed in the database.
 */
export function startAlertRunner(options: { db: Db; logger: Logger; intervalMs: number; delivery?: DeliveryOptions }): AlertRunner {
  const { db, logger } = options;
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const pass = async () => {
    try {
      const evaluation = await evaluateThresholds(db);
      for (const f of evaluation.fired) logger.info('alert threshold crossed', f);
      const sent = await deliverDueWebhooks(db, { logger, ...options.delivery });
      if (sent.delivered + sent.retrying + sent.failed > 0) logger.info('webhooks sent', { ...sent });
    } catch (err) {
      logger.error('alert pass failed; the next pass retries', { err });
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
