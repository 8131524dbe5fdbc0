import type { Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { pruneSignInRows, type PrunedSignInRows } from './prune-sign-in-rows.js';
import type { SignInLimits } from './sign-in.js';

export interface SignInPruner {
  /** One run now, after the one in progress (tests call it instead of waiting for the timer). */
  runOnce(): Promise<PrunedSignInRows | undefined>;
  /** No run starts after this; one in progress ends after its current batch. */
  stop(): Promise<void>;
}

/**
 * Deletes the sign-in rows nothing reads any more (prune-sign-in-rows.ts): once at start, then
 * every `intervalMs` give or take a fifth, so replicas started together do not prune together.
 * Without it every failed sign-in, every session and every trusted browser stays for ever, and a
 * password-guessing bot grows sign_in_attempts without bound.
 */
export function startSignInPruner(options: { db: Db; logger: Logger; intervalMs: number; limits: SignInLimits; batchSize?: number }): SignInPruner {
  const { db, logger } = options;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<PrunedSignInRows | undefined> = Promise.resolve(undefined);

  const pass = async (): Promise<PrunedSignInRows | undefined> => {
    if (stopped) return undefined;
    const began = Date.now();
    try {
      const pruned = await pruneSignInRows(db, { limits: options.limits, batchSize: options.batchSize, stopping: () => stopped });
      if (pruned.signInAttempts + pruned.sessions + pruned.trustedDevices > 0) logger.info('old sign-in rows pruned', { ...pruned, ms: Date.now() - began });
      return pruned;
    } catch (err) {
      logger.error('pruning old sign-in rows failed; the next run retries', { err });
      return undefined;
    }
  };
  const runOnce = () => (running = running.then(pass));
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void runOnce().then(schedule), options.intervalMs * (0.8 + 0.4 * Math.random()));
    timer.unref();
  };
  void runOnce().then(schedule);

  return {
    runOnce,
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
