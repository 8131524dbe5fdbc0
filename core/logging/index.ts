export { createLogger, type Logger, type LogLevel, type LogFields, type LoggerOptions } from './logger.js';
