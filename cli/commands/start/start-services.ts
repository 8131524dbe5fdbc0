import { configuredUsageSink } from '../../../adapters/kafka/index.js';
import { composeApi } from '../../../api/compose.js';
import { createUsageConsumer } from '../../../billing-worker/consumer.js';
import { startBillingWorker } from '../../../billing-worker/start-billing-worker.js';
import type { Config } from '../../../core/config/index.js';
import type { OpenDatabase } from '../../../core/db/index.js';
import { serveOnPort, type HttpService } from '../../../core/http-server/index.js';
import type { Logger } from '../../../core/logging/index.js';
import { createStartedParts, STOP_STEP_MS, stopWithin, type StartedParts } from '../../../core/process/index.js';
import { pickSampleFiscalCodes, ensureSampleData } from '../../../core/sample-data/index.js';
import type { UsageConsumerFailure } from '../../../core/usage/index.js';
import { composeMcp } from '../../../mcp/compose.js';
import { composeDashboard } from '../../../dashboard/compose.js';
import { ensureOperator, operatorPasswordWorks } from '../../../core/dashboard-auth/index.js';
import { localUrl } from '../../../core/net/local-url.js';
import { ensureDemoOrganization, readDemoFile, writeDemoFile, type DemoFile } from './demo-credentials.js';

export interface RunningService {
  demo: DemoFile;
  /** Settles if the billing worker stopped consuming for good (BillingWorker.failed). */
  failed: Promise<UsageConsumerFailure>;
  /** Stops every part, the last started first; false when one failed to stop (logged). */
  stop(): Promise<boolean>;
}

/**
 * Everything `npm start` runs, in one process: the API, the tool server, the dashboard and the
 * billing worker over one database pool and one access pipeline (so API and MCP calls share one
 * organization's rate limits even without Redis). Production runs the same pieces as separate
 * processes (api/main.ts, mcp/main.ts, billing-worker/main.ts).
 */
export async function startServices(config: Config, logger: Logger, database: OpenDatabase): Promise<RunningService> {
  const parts = createStartedParts(logger);
  let started: { demo: DemoFile; failed: Promise<UsageConsumerFailure> };
  try {
    started = await startParts(config, logger, database, parts);
  } catch (err) {
    // What started before the failure (a port already taken, a query that failed) stops here:
    // left running, the worker, the alert runner and the key listeners would keep the process
    // alive, polling a database its owner is about to close, and nobody would stop them.
    await parts.stopAll();
    throw err;
  }
  return { ...started, stop: () => parts.stopAll() };
}

// In the order of `parts`, which stops them in reverse: the servers first, so every served
// call's usage event is published before the worker and the database go away; the worker last.
// Each with its deadline, as the services run alone have theirs (api/main.ts, mcp/main.ts,
// billing-worker/main.ts): a key's last use written to a database that stopped answering (one
// of DATABASE_URL's) held Ctrl-C for ever. One past its deadline is said, and the stop goes on
// and ends "not cleanly".
async function startParts(config: Config, logger: Logger, database: OpenDatabase, parts: StartedParts): Promise<{ demo: DemoFile; failed: Promise<UsageConsumerFailure> }> {
  const db = database.db;
  const bounded = (what: string, step: () => Promise<void>, ms = STOP_STEP_MS) => async () => {
    if (!(await stopWithin(logger, what, step, ms))) throw new Error(`${what} did not close within ${ms / 1000} s`);
  };
  await ensureSampleData({ db, count: config.SAMPLE_COMPANIES, seed: config.SAMPLE_SEED, logger });
  const previous = await readDemoFile(config.DATA_DIR);
  const { organizationId, apiKey, created } = await ensureDemoOrganization(db, previous);
  if (created === 'key' && previous) logger.warn('the previous demo key no longer works; a new demo key was created for the demo organization');
  if (created === 'organization' && previous) logger.warn('the previous demo organization is gone; a new demo organization and key were created');
  // The first operator's password exists in plain text only at creation: keep it in demo.json
  // so a restart can still show it, as long as it still signs in (not once it was changed).
  const signIn = await ensureOperator(db, { email: 'operator@example.com' });
  const kept = previous?.operator?.email === signIn.email ? previous.operator.password : null;
  const operator = {
    email: signIn.email,
    password: signIn.password ?? (kept !== null && (await operatorPasswordWorks(db, signIn.email, kept)) ? kept : null),
  };
  const urls = (apiPort: number, mcpPort: number, dashboardPort: number) => {
    // The API and the tool server as a client here opens them (the banner's curl, demo.json):
    // with HOST 0.0.0.0 (listening everywhere), 127.0.0.1. Not the dashboard's: `operator
    // reset-link` makes links for other people from it, and refuses a 0.0.0.0 one, asking for
    // PUBLIC_DASHBOARD_URL, where 127.0.0.1 would pass and reach nobody.
    const mcpUrl = config.PUBLIC_MCP_URL ?? localUrl(config.HOST, mcpPort);
    return {
      baseUrl: config.PUBLIC_BASE_URL ?? localUrl(config.HOST, apiPort),
      mcpUrl,
      mcpEndpoint: `${mcpUrl}/mcp`,
      dashboardUrl: config.PUBLIC_DASHBOARD_URL ?? `http://${config.HOST}:${dashboardPort}`,
    };
  };
  const sampleFiscalCodes = await pickSampleFiscalCodes(db, 24);
  // Written at once, before anything else can fail (a port taken, say): the demo key and the
  // operator's password exist in plain text only now, and the next start reads them from here.
  // Written again with the ports actually listened on once the servers are up.
  await writeDemoFile(config.DATA_DIR, { apiKey, organizationId, ...urls(config.API_PORT, config.MCP_PORT, config.DASHBOARD_PORT), operator, sampleFiscalCodes });

  const worker = await startBillingWorker({
    db,
    consumer: createUsageConsumer({ config, db, connectionString: database.connectionString, logger }),
    logger,
    batchStallMs: config.BILLING_BATCH_STALL_MS,
  });
  // Its batch in flight drains for up to twice a step, as billing-worker/main.ts allows it.
  parts.add('billing worker', bounded('the billing worker (its batch in flight)', async () => {
    await worker.stop();
    logger.info('billing worker stopped', { ...worker.stats() });
  }, 2 * STOP_STEP_MS));
  const usage = configuredUsageSink({ config, database, logger });
  const api = await composeApi({ config, logger, database, createUsageSink: () => usage });
  parts.add('API services', bounded('the API services', () => api.close()));
  const mcp = composeMcp({ config, logger, database, access: api.access, usage, companies: api.companies });
  parts.add('tool server services', bounded('the tool server services', () => mcp.close()));
  const dashboard = await composeDashboard({ config, logger, database });
  parts.add('alert runner and sign-in pruner', bounded('the alert runner and sign-in pruner', () => dashboard.close()));
  await api.ready();

  // Closed together: each waits up to 5 s for its calls in flight.
  const servers: HttpService[] = [];
  parts.add('servers', async () => {
    await Promise.all(servers.map((server) => server.close(5_000)));
  });
  // A port already taken is most often a first `npm start` still running.
  const likelyHolder = 'another npm start';
  const apiServer = await serveOnPort('API_PORT', api.app.callback(), config.API_PORT, config.HOST, { jsonErrors: true, likelyHolder });
  servers.push(apiServer);
  const mcpServer = await serveOnPort('MCP_PORT', mcp.app.callback(), config.MCP_PORT, config.HOST, { jsonErrors: true, likelyHolder });
  servers.push(mcpServer);
  const dashboardServer = await serveOnPort('DASHBOARD_PORT', dashboard.app.callback(), config.DASHBOARD_PORT, config.HOST, { likelyHolder });
  servers.push(dashboardServer);

  const demo: DemoFile = { apiKey, organizationId, ...urls(apiServer.port, mcpServer.port, dashboardServer.port), operator, sampleFiscalCodes };
  await writeDemoFile(config.DATA_DIR, demo);
  return { demo, failed: worker.failed };
}
