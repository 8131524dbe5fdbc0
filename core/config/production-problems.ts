import type { Config } from './config-schema.js';
import { ConfigError } from './parse-config.js';
import { chooseRateLimitStore } from './rate-limit-store.js';
import { chooseUsageBus } from './usage-bus.js';

/** A service process run alone (its main.ts), as production runs them. */
export type ServiceKind = 'api' | 'mcp' | 'dashboard' | 'billing-worker';

/** Said by productionProblems and by openDatabase, which keeps the rule for whoever calls it directly. */
export const DATABASE_URL_REQUIRED =
  'DATABASE_URL is required when NODE_ENV is production: the embedded PostgreSQL is for running on one machine (npm start, tests)';

/**
 * Everything a service process would refuse at start, beyond what parseConfig checks: the rules
 * of the rate-limit store, the usage bus and the database, for the parts `kind` uses. Each of
 * those is also checked where it is chosen (chooseRateLimitStore, chooseUsageBus, openDatabase),
 * which throws at its first problem; run one after another, a production start-up missing three
 * settings said one per restart. Gathered here, right after parseConfig, they are said together.
 */
export function productionProblems(config: Config, kind: ServiceKind): string[] {
  const problems: string[] = [];
  const collect = (check: () => unknown) => {
    try {
      check();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  };
  if (kind === 'api' || kind === 'mcp') collect(() => chooseRateLimitStore(config));
  if (config.NODE_ENV === 'production' && !config.DATABASE_URL) problems.push(DATABASE_URL_REQUIRED);
  // The dashboard publishes no usage events; the others publish or read them.
  if (kind !== 'dashboard') collect(() => chooseUsageBus(config));
  return problems;
}

/** productionProblems as one ConfigError (the format of parseConfig's), thrown when there are any. */
export function refuseProductionProblems(config: Config, kind: ServiceKind): void {
  const problems = productionProblems(config, kind);
  if (problems.length > 0) throw new ConfigError(problems);
}
