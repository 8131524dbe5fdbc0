export { configSchema, configVariables, type Config } from './config-schema.js';
export { parseConfig, ConfigError } from './parse-config.js';
export { chooseUsageBus, type UsageBusKind } from './usage-bus.js';
