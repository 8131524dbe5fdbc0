import type Koa from 'koa';
import { createConfiguredAccessControl, type AccessControl } from '../core/access/index.js';
import { createConfiguredCompanyStore, type CompanyCache } from '../core/companies/index.js';
import type { Config } from '../core/config/index.js';
import type { OpenDatabase } from '../core/db/index.js';
import type { Logger } from '../core/logging/index.js';
import { recordRefusedCalls } from '../core/billing/index.js';
import { createPostgresUsageSink, type UsageSink } from '../core/usage/index.js';
import { createMcpApp } from './http.js';
import { originCheck } from './origin-check.js';

/** Reported as serverInfo.version; the service's public version (as the OpenAPI document's). */
export const MCP_SERVER_VERSION = '1.0.0';

export interface ComposeMcpOptions {
  config: Config;
  logger: Logger;
  /** Opened (and later closed) by the caller. */
  database: OpenDatabase;
  /** Injected by the all-in-one `npm start` so API and tool server share one access pipeline,
   * hence one set of per-organization rate limits even without Redis. Closed by its owner. */
  access?: AccessControl;
  /** Default: the Postgres usage bus. `npm start` injects the Kafka sink when KAFKA_BROKERS is set. */
  usage?: UsageSink;
  /** Injected by `npm start` so API and tool server share one company cache. Closed by its owner. */
  companies?: CompanyCache;
}

export interface ComposedMcp {
  app: Koa;
  /** Closes what was built here (not the database, nor injected parts). */
  close(): Promise<void>;
}

/** The tool server's services wired from config: used by mcp/main.ts and by `npm start`. */
export function composeMcp(options: ComposeMcpOptions): ComposedMcp {
  const { config, logger, database } = options;
  const db = database.db;
  const closers: (() => Promise<void>)[] = [];
  let access = options.access;
  if (!access) {
    const owned = createConfiguredAccessControl({ config, database, logger });
    access = owned.access;
    closers.push(() => owned.close());
  }
  let usage = options.usage;
  if (!usage) {
    const owned = createPostgresUsageSink(db, { logger, recordRefused: (events) => recordRefusedCalls(db, events) });
    usage = owned;
    closers.unshift(() => owned.close());
  }
  let store = options.companies;
  if (!store) {
    const owned = createConfiguredCompanyStore({ config, database, logger });
    store = owned.store;
    closers.push(() => owned.close());
  }
  const isAllowedOrigin = originCheck({ allowed: config.MCP_ALLOWED_ORIGINS, publicUrl: config.PUBLIC_MCP_URL });
  const app = createMcpApp({
    access, usage, store, cachedText: store.serialised, db, checkDatabase: database.probe, queryTimeoutMs: config.COMPANY_QUERY_TIMEOUT_MS, logger, version: MCP_SERVER_VERSION, isAllowedOrigin,
    trustGatewayRequestId: config.TRUST_GATEWAY_REQUEST_ID,
  });
  return {
    app,
    close: async () => {
      for (const close of closers) await close();
    },
  };
}
