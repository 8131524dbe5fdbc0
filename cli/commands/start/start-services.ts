import { configuredUsageSink } from '../../../adapters/kafka/index.js';
import { composeApi } from '../../../api/compose.js';
import { createUsageConsumer } from '../../../billing-worker/consumer.js';
import { startBillingWorker } from '../../../billing-worker/start-billing-worker.js';
import type { Config } from '../../../core/config/index.js';
import type { OpenDatabase } from '../../../core/db/index.js';
import { serveHttp } from '../../../core/http-server/index.js';
import type { Logger } from '../../../core/logging/index.js';
import { pickSampleFiscalCodes, ensureSampleData } from '../../../core/sample-data/index.js';
import { composeMcp } from '../../../mcp/compose.js';
import { composeDashboard } from '../../../dashboard/compose.js';
import { ensureOperator } from '../../../core/dashboard-auth/index.js';
import { ensureDemoOrganization, readDemoFile, writeDemoFile, type DemoFile } from './demo-credentials.js';

export interface RunningService {
  demo: DemoFile;
  stop(): Promise<void>;
}

/**
 * Everything `npm start` runs, in one process: the API, the tool server, the dashboard and the
 * billing worker over one database pool and one access pipeline (so API and MCP calls share one
 * organization's rate limits even without Redis). Production runs the same pieces as separate
 * processes (api/main.ts, mcp/main.ts, billing-worker/main.ts).
 */
export async function startServices(config: Config, logger: Logger, database: OpenDatabase): Promise<RunningService> {
  const db = database.db;
  await ensureSampleData({ db, count: config.SAMPLE_COMPANIES, seed: config.SAMPLE_SEED, logger });
  const previous = await readDemoFile(config.DATA_DIR);
  const { organizationId, apiKey, created } = await ensureDemoOrganization(db, previous);
  if (created && previous) logger.warn('the previous demo key no longer works; a new demo organization and key were created');

  const usage = configuredUsageSink({ config, database, logger });
  const api = await composeApi({ config, logger, database, createUsageSink: () => usage });
  const mcp = composeMcp({ config, logger, database, access: api.access, usage, companies: api.companies });
  const worker = await startBillingWorker({
    db,
    consumer: createUsageConsumer({ config, db, connectionString: database.connectionString, logger }),
    logger,
  });
  const dashboard = await composeDashboard({ config, logger, database });
  // The first operator's password exists in plain text only at creation: keep it in demo.json
  // so a restart can still show it.
  const signIn = await ensureOperator(db, { email: 'operator@example.com' });
  const operator = {
    email: signIn.email,
    password: signIn.password ?? (previous?.operator?.email === signIn.email ? previous.operator.password : null),
  };
  await api.ready();

  const apiServer = await serveHttp(api.app.callback(), config.API_PORT, config.HOST, { jsonErrors: true });
  const mcpServer = await serveHttp(mcp.app.callback(), config.MCP_PORT, config.HOST, { jsonErrors: true });
  const dashboardServer = await serveHttp(dashboard.app.callback(), config.DASHBOARD_PORT, config.HOST);

  const demo: DemoFile = {
    apiKey,
    organizationId,
    baseUrl: config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${apiServer.port}`,
    mcpUrl: config.PUBLIC_MCP_URL ?? `http://${config.HOST}:${mcpServer.port}`,
    dashboardUrl: config.PUBLIC_DASHBOARD_URL ?? `http://${config.HOST}:${dashboardServer.port}`,
    operator,
    sampleFiscalCodes: await pickSampleFiscalCodes(db, 24),
  };
  await writeDemoFile(config.DATA_DIR, demo);

  return {
    demo,
    stop: async () => {
      // Stop taking calls first, so every served call's usage event is published before the
      // worker and the database go away.
      await Promise.all([apiServer.close(5_000), mcpServer.close(5_000), dashboardServer.close(5_000)]);
      await dashboard.close();
      await mcp.close();
      await api.close();
      await worker.stop();
    },
  };
}
