export { configSchema, configVariables, type Config } from './config-schema.js';
export { parseConfig, ConfigError } from './parse-config.js';
export { chooseUsageBus, type UsageBusKind } from './usage-bus.js';
export { chooseRateLimitStore, describeRateLimitStore, type RateLimitStore } from './rate-limit-store.js';
export { unknownVariableWarnings } from './unknown-variables.js';
export { productionProblems, refuseProductionProblems, DATABASE_URL_REQUIRED, type ServiceKind } from './production-problems.js';
