export { configSchema, configVariables, type Config } from './config-schema.js';
export { parseConfig, ConfigError } from './parse-config.js';
