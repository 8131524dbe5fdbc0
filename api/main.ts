import http from 'node:http';
import { parseConfig } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { configuredUsageSink } from '../adapters/kafka/index.js';
import { composeApi } from './compose.js';

// The API process's composition root: config is parsed here once and everything else is
// handed down. `npm start` runs all services in one process through composeApi instead.
const config = parseConfig(process.env);
const logger = createLogger({ level: config.LOG_LEVEL, base: { service: 'api' } });
const database = await openDatabase(config, logger, 'api');
// Kafka when KAFKA_BROKERS is set, else the Postgres bus.
const api = await composeApi({ config, logger, database, createUsageSink: configuredUsageSink });

const server = http.createServer(api.app.callback());
// Keep-alive longer than common load balancers' idle timeouts, so they close first.
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(config.API_PORT, config.HOST, resolve));
const address = server.address();
logger.info('API listening', { host: config.HOST, port: typeof address === 'object' && address ? address.port : config.API_PORT });

let stopping = false;
async function shutdown(signal: NodeJS.Signals) {
  if (stopping) return;
  stopping = true;
  logger.info('shutting down', { signal });
  // Stop accepting, let in-flight requests finish (their usage events included), then close.
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), 10_000);
  try {
    await drained;
    await api.close();
    await database.close();
  } catch (err) {
    logger.error('unclean shutdown', { err });
    process.exitCode = 1;
  } finally {
    clearTimeout(force);
    process.kill(process.pid, signal);
  }
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void shutdown(signal));
