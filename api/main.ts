import { configuredUsageSink } from '../adapters/kafka/index.js';
import { parseConfig, refuseProductionProblems, unknownVariableWarnings } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { serveOnPort, stopOnSignal, tuneHeap } from '../core/http-server/index.js';
import { createLogger } from '../core/logging/index.js';
import { startOrExit, stopWithin } from '../core/process/index.js';
import { composeApi } from './compose.js';

// The API process's composition root: config is parsed here once and everything else is
// handed down. `npm start` runs all services in one process through composeApi instead.
tuneHeap();
const base = { service: 'api' };
// A start-up that fails (bad config, no database, API_PORT taken) ends in one log line.
await startOrExit(base, async (parts) => {
  const config = parseConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, base });
  for (const warning of unknownVariableWarnings(process.env)) logger.warn(warning);
  // Before anything opens, every setting production requires, said together (rate limits counted
  // per process must be asked for, as must the Postgres bus and the embedded database).
  refuseProductionProblems(config, 'api');
  const database = await openDatabase(config, logger, 'api');
  parts.add('database', () => database.close());
  // Kafka when KAFKA_BROKERS is set, else the Postgres bus.
  const api = await composeApi({ config, logger, database, createUsageSink: configuredUsageSink });
  parts.add('API services', () => api.close());

  const http = await serveOnPort('API_PORT', api.app.callback(), config.API_PORT, config.HOST, { jsonErrors: true });
  logger.info('API listening', { host: config.HOST, port: http.port });

  // Stop accepting, let in-flight requests finish (their usage events included), then close.
  // Each step with its deadline (core/process/stop-within.ts): the services' close writes keys'
  // last use and says goodbye to listeners, which a database that stopped answering never lets
  // finish; the pool's close (database.close) has its own.
  stopOnSignal(logger, async () => {
    await http.close();
    await stopWithin(logger, 'the API services', () => api.close());
    await database.close();
  });
});
