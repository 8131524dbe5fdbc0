import http from 'node:http';
import { parseConfig } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { configuredUsageSink } from '../adapters/kafka/index.js';
import { composeMcp } from './compose.js';

// The tool server's composition root: config is parsed here once and everything else is
// handed down. Run alone, it counts rate limits in process unless REDIS_URL is set, so set
// REDIS_URL when the API runs in another process: their limits are one set per organization.
const config = parseConfig(process.env);
const logger = createLogger({ level: config.LOG_LEVEL, base: { service: 'mcp' } });
const database = await openDatabase(config, logger, 'mcp');
// Kafka when KAFKA_BROKERS is set, else the Postgres bus.
const usage = configuredUsageSink({ config, database, logger });
const mcp = composeMcp({ config, logger, database, usage });

const server = http.createServer(mcp.app.callback());
// Keep-alive longer than common load balancers' idle timeouts, so they close first.
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(config.MCP_PORT, config.HOST, resolve));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : config.MCP_PORT;
logger.info('tool server listening', { url: `${config.PUBLIC_MCP_URL ?? `http://${config.HOST}:${port}`}/mcp` });

let stopping = false;
async function shutdown(signal: NodeJS.Signals) {
  if (stopping) return;
  stopping = true;
  logger.info('shutting down', { signal });
  // Stop accepting, let in-flight tool calls finish (their usage events included), then close.
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), 10_000);
  try {
    await drained;
    await mcp.close();
    await usage.close();
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
