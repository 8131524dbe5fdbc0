import http from 'node:http';
import { parseConfig } from '../core/config/index.js';
import { ensureOperator } from '../core/dashboard-auth/index.js';
import { openDatabase } from '../core/db/index.js';
import { createLogger } from '../core/logging/index.js';
import { composeDashboard } from './compose.js';

// The dashboard process's composition root: config parsed once, everything handed down.
// `npm start` runs it in the all-in-one process through composeDashboard instead.
const config = parseConfig(process.env);
const logger = createLogger({ level: config.LOG_LEVEL, base: { service: 'dashboard' } });
const database = await openDatabase(config, logger, 'dashboard');
const dashboard = await composeDashboard({ config, logger, database });

// A fresh installation gets a first operator; its password is printed once, here.
const operator = await ensureOperator(database.db, { email: 'operator@example.com' });
if (operator.password) process.stdout.write(`first operator: ${operator.email} / ${operator.password} (shown once)\n`);

const server = http.createServer(dashboard.app.callback());
server.keepAliveTimeout = 65_000;
await new Promise<void>((resolve) => server.listen(config.DASHBOARD_PORT, config.HOST, resolve));
const address = server.address();
const port = typeof address === 'object' && address ? address.port : config.DASHBOARD_PORT;
logger.info('dashboard listening', { url: config.PUBLIC_DASHBOARD_URL ?? `http://${config.HOST}:${port}` });

let stopping = false;
async function shutdown(signal: NodeJS.Signals) {
  if (stopping) return;
  stopping = true;
  logger.info('shutting down', { signal });
  const drained = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const force = setTimeout(() => server.closeAllConnections(), 10_000);
  try {
    await drained;
    await dashboard.close();
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
