import { parseConfig, refuseProductionProblems, unknownVariableWarnings } from '../core/config/index.js';
import { ensureOperator } from '../core/dashboard-auth/index.js';
import { openDatabase } from '../core/db/index.js';
import { serveOnPort, stopOnSignal } from '../core/http-server/index.js';
import { createLogger } from '../core/logging/index.js';
import { startOrExit } from '../core/process/index.js';
import { composeDashboard } from './compose.js';

// The dashboard process's composition root: config parsed once, everything handed down.
// `npm start` runs it in the all-in-one process through composeDashboard instead.
const base = { service: 'dashboard' };
// A start-up that fails (bad config, no database, DASHBOARD_PORT taken) ends in one log line.
await startOrExit(base, async (parts) => {
  const config = parseConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, base });
  for (const warning of unknownVariableWarnings(process.env)) logger.warn(warning);
  // Before anything opens: every setting production requires, said together.
  refuseProductionProblems(config, 'dashboard');
  const database = await openDatabase(config, logger, 'dashboard');
  parts.add('database', () => database.close());
  const dashboard = await composeDashboard({ config, logger, database });
  parts.add('alert runner and sign-in pruner', () => dashboard.close());

  // A fresh installation gets a first operator; its password is printed once, here. A log
  // collector may keep this line: changed after the first sign-in, it opens nothing.
  const operator = await ensureOperator(database.db, { email: 'operator@example.com' });
  if (operator.password) {
    process.stdout.write(`first operator: ${operator.email} / ${operator.password} (shown once: sign in and change it at /account/password)\n`);
  }

  const http = await serveOnPort('DASHBOARD_PORT', dashboard.app.callback(), config.DASHBOARD_PORT, config.HOST);
  logger.info('dashboard listening', { url: config.PUBLIC_DASHBOARD_URL ?? `http://${config.HOST}:${http.port}` });

  stopOnSignal(logger, async () => {
    await http.close();
    await dashboard.close();
    await database.close();
  });
});
