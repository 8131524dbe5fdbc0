import type Koa from 'koa';
import { createConfiguredAccessControl, type AccessControl } from '../core/access/index.js';
import { createConfiguredCompanyStore, type CompanyCache } from '../core/companies/index.js';
import type { Config } from '../core/config/index.js';
import type { OpenDatabase } from '../core/db/index.js';
import type { Logger } from '../core/logging/index.js';
import { localUrl } from '../core/net/local-url.js';
import { recordRefusedCalls } from '../core/billing/index.js';
import { createPostgresUsageSink, type UsageSink } from '../core/usage/index.js';
import { createApp } from './app.js';
import type { ApiState } from './state.js';
import { exampleCompanyFinder } from './openapi/example-companies.js';

/** Builds the usage sink of the process; the Postgres bus unless the caller injects another (Kafka). */
export type UsageSinkFactory = (deps: { config: Config; database: OpenDatabase; logger: Logger }) => UsageSink | Promise<UsageSink>;

export const postgresUsageSink: UsageSinkFactory = ({ database, logger }) =>
  createPostgresUsageSink(database.db, { logger, recordRefused: (events) => recordRefusedCalls(database.db, events) });

export interface ComposeApiOptions {
  config: Config;
  logger: Logger;
  /** Opened (and later closed) by the caller: `npm start` shares one with the other services. */
  database: OpenDatabase;
  createUsageSink?: UsageSinkFactory;
}

export interface ComposedApi {
  app: Koa<ApiState>;
  /** The access pipeline, shared with the tool server by `npm start` (one set of rate limits). */
  access: AccessControl;
  /** The cached company store, shared with the tool server by `npm start` (one cache). */
  companies: CompanyCache;
  /** Resolves once key/plan change notifications are heard. */
  ready(): Promise<void>;
  /** Closes what was built here (not the database). */
  close(): Promise<void>;
}

/** The API's services wired from config: used by api/main.ts and by the all-in-one `npm start`. */
export async function composeApi(options: ComposeApiOptions): Promise<ComposedApi> {
  const { config, logger, database } = options;
  const db = database.db;
  // First: a usage bus refused by the config (usage-bus.ts) then leaves nothing open behind it.
  const usage = await (options.createUsageSink ?? postgresUsageSink)({ config, database, logger });
  const accessControl = createConfiguredAccessControl({ config, database, logger });
  const access = accessControl.access;
  const companies = createConfiguredCompanyStore({ config, database, logger });
  const store = companies.store;

  const app = createApp({
    access,
    store,
    usage,
    lookupJson: store.json,
    logger,
    publicBaseUrl: config.PUBLIC_BASE_URL ?? localUrl(config.HOST, config.API_PORT),
    // A deployment that names its API but not its tool server: the guide names no address (its
    // command has a placeholder) and says the account manager gives it, rather than guess one
    // or give this host's, which is not the customer's.
    publicMcpUrl: config.PUBLIC_MCP_URL ?? (config.PUBLIC_BASE_URL === undefined ? localUrl(config.HOST, config.MCP_PORT) : undefined),
    checkDatabase: database.probe,
    trustGatewayRequestId: config.TRUST_GATEWAY_REQUEST_ID,
    findExampleCompany: exampleCompanyFinder(db, config.OPENAPI_EXAMPLE_COMPANIES),
  });

  return {
    app,
    access,
    companies: store,
    ready: async () => {
      await Promise.all([access.ready(), companies.ready()]);
    },
    close: async () => {
      await usage.close();
      await accessControl.close();
      await companies.close();
    },
  };
}
