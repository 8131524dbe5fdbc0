import type { Config } from '../config/index.js';
import { createNotificationListener, type OpenDatabase } from '../db/index.js';
import type { Logger } from '../logging/index.js';
import { createCompanyCache, type CompanyCache } from './company-cache.js';
import { createCompanyStore } from './company-store.js';

export interface ConfiguredCompanyStore {
  store: CompanyCache;
  /** Resolves once change notifications are heard (until then nothing is cached). */
  ready(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The company store behind its read-through cache, as every process wires it. Company data
 * changes only by import, and every import NOTIFYs `companies_changed`, which clears the cache
 * (see company-cache.ts for why this is safe).
 */
export function createConfiguredCompanyStore({ config, database, logger }: { config: Config; database: OpenDatabase; logger: Logger }): ConfiguredCompanyStore {
  const companyChanges = createNotificationListener({ connectionString: database.connectionString, logger });
  const store = createCompanyCache({
    store: createCompanyStore({ db: database.db, queryTimeoutMs: config.COMPANY_QUERY_TIMEOUT_MS, logger }),
    notifications: companyChanges,
  });
  return {
    store,
    ready: () => companyChanges.whenConnected(),
    close: () => companyChanges.close(),
  };
}
