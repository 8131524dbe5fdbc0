export { createLogger, type Logger, type LogLevel, type LogFields, type LoggerOptions } from './logger.js';
export { createRepeatGate, type RepeatGate } from './repeat-gate.js';
