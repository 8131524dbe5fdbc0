import { configuredUsageSink } from '../adapters/kafka/index.js';
import { parseConfig, refuseProductionProblems, unknownVariableWarnings } from '../core/config/index.js';
import { openDatabase } from '../core/db/index.js';
import { serveOnPort, stopOnSignal, tuneHeap } from '../core/http-server/index.js';
import { createLogger } from '../core/logging/index.js';
import { startOrExit, stopWithin } from '../core/process/index.js';
import { composeMcp } from './compose.js';

// The tool server's composition root: config is parsed here once and everything else is
// handed down. Run alone, it counts rate limits in process unless REDIS_URL is set, so set
// REDIS_URL (and the API's REDIS_KEY_PREFIX) when the API runs in another process: their limits
// are then one set per organization.
tuneHeap();
const base = { service: 'mcp' };
// A start-up that fails (bad config, no database, MCP_PORT taken) ends in one log line.
await startOrExit(base, async (parts) => {
  const config = parseConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, base });
  for (const warning of unknownVariableWarnings(process.env)) logger.warn(warning);
  // Before anything opens, every setting production requires, said together (rate limits counted
  // per process must be asked for, as must the Postgres bus and the embedded database).
  refuseProductionProblems(config, 'mcp');
  const database = await openDatabase(config, logger, 'mcp');
  parts.add('database', () => database.close());
  // Kafka when KAFKA_BROKERS is set, else the Postgres bus.
  const usage = configuredUsageSink({ config, database, logger });
  parts.add('usage sink', () => usage.close());
  const mcp = composeMcp({ config, logger, database, usage });
  parts.add('tool server services', () => mcp.close());

  const http = await serveOnPort('MCP_PORT', mcp.app.callback(), config.MCP_PORT, config.HOST, { jsonErrors: true });
  logger.info('tool server listening', { url: `${config.PUBLIC_MCP_URL ?? `http://${config.HOST}:${http.port}`}/mcp` });

  // Stop accepting, let in-flight tool calls finish (their usage events included), then close.
  // Each step with its deadline, as the API's (api/main.ts); the pool's close has its own.
  stopOnSignal(logger, async () => {
    await http.close();
    await stopWithin(logger, 'the tool server services', async () => {
      await mcp.close();
      await usage.close();
    });
    await database.close();
  });
});
