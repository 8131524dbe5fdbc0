// One API process for the fault script: the real composition (api/compose.ts) with the usage
// sink chosen by config (Kafka when KAFKA_BROKERS is set), on API_PORT. Killed with -9 by
// the script, so it has no shutdown logic worth the name.
import http from 'node:http';
import { configuredUsageSink } from '../../adapters/kafka/index.js';
import { composeApi } from '../../api/compose.js';
import { parseConfig } from '../../core/config/index.js';
import { openDatabase } from '../../core/db/index.js';
import { createLogger } from '../../core/logging/index.js';

const config = parseConfig(process.env);
const logger = createLogger({ level: config.LOG_LEVEL, base: { process: `api:${config.API_PORT}` } });
const database = await openDatabase(config, logger, 'api-fault');
const api = await composeApi({ config, logger, database, createUsageSink: configuredUsageSink });
await api.ready();
const server = http.createServer(api.app.callback());
server.keepAliveTimeout = 65_000;
server.listen(config.API_PORT, config.HOST, () => process.stdout.write(`listening ${config.API_PORT}\n`));
process.once('SIGTERM', () => {
  server.close();
  void api.close().then(() => database.close()).then(() => process.exit(0));
});
