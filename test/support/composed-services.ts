import { inject } from 'vitest';
import { composeApi } from '../../api/compose.js';
import { parseConfig } from '../../core/config/index.js';
import { openDatabase, type OpenDatabase } from '../../core/db/index.js';
import type { Logger } from '../../core/logging/index.js';
import { composeDashboard } from '../../dashboard/compose.js';
import { composeMcp } from '../../mcp/compose.js';
import { listen } from '../api-fixtures.js';
import { hostAndPort, startTcpProxy, type TcpProxy } from './tcp-proxy.js';

export interface ComposedServices {
  /** The relay every database connection passes through: the test freezes or cuts it. */
  proxy: TcpProxy;
  database: OpenDatabase;
  urls: { api: string; mcp: string; dashboard: string };
  close(): Promise<void>;
}

/**
 * The API, the tool server and the dashboard composed as `npm start` composes them, over one
 * process's pool to the run's database reached through a relay, each on a port of its own.
 */
export async function startComposedServices(options: { name: string; poolMax: number; logLevel: string; logger: Logger }): Promise<ComposedServices> {
  const cleanups: (() => Promise<unknown>)[] = [];
  const databaseUrl = inject('databaseUrl');
  const proxy = await startTcpProxy(hostAndPort(databaseUrl));
  const close = async () => {
    // The relay first: what the services close afterwards ends at once rather than waiting for
    // goodbyes a frozen connection would never answer.
    await proxy.close();
    for (const cleanup of cleanups.reverse()) await cleanup();
  };
  try {
    const { logger } = options;
    const config = parseConfig({ DATABASE_URL: proxy.urlFor(databaseUrl), DATABASE_POOL_MAX: String(options.poolMax), LOG_LEVEL: options.logLevel });
    const database = await openDatabase(config, logger, options.name);
    cleanups.push(() => database.close());
    const api = await composeApi({ config, logger, database });
    cleanups.push(() => api.close());
    const mcp = composeMcp({ config, logger, database, access: api.access, companies: api.companies });
    cleanups.push(() => mcp.close());
    const dashboard = await composeDashboard({ config, logger, database, alertIntervalMs: 60_000 });
    cleanups.push(() => dashboard.close());
    await api.ready();
    const [apiServer, mcpServer, dashboardServer] = [await listen(api.app), await listen(mcp.app), await listen(dashboard.app)];
    cleanups.push(() => apiServer.close(), () => mcpServer.close(), () => dashboardServer.close());
    return { proxy, database, urls: { api: apiServer.url, mcp: mcpServer.url, dashboard: dashboardServer.url }, close };
  } catch (err) {
    await close();
    throw err;
  }
}
