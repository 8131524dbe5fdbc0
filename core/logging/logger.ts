import { createRepeatGate } from './repeat-gate.js';

// A small structured logger: one JSON line per event. It is created by each composition root
// and passed down; there is no module-level logger.
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(msg: string, fields?: LogFields): void;
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  child(fields: LogFields): Logger;
  /** Whether `level` is written: lets a hot path skip building fields nobody will read. */
  enabled(level: Exclude<LogLevel, 'silent'>): boolean;
  /**
   * A warning that can come with every request while a dependency is down: said for the first
   * of its `kind`, then at most once every 10 s with `heldBack`, how many were not
   * (repeat-gate.ts). A logger and its children share the count.
   */
  warnRepeating(kind: string, msg: string, fields?: LogFields): void;
}

const rank: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

export interface LoggerOptions {
  level: LogLevel;
  /** Defaults to stderr so stdout stays free for CLI output. */
  write?: (line: string) => void;
  base?: LogFields;
}

export function createLogger(options: LoggerOptions): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const threshold = rank[options.level];
  const repeats = createRepeatGate();
  const make = (base: LogFields): Logger => {
    const emit = (level: Exclude<LogLevel, 'silent'>, msg: string, fields?: LogFields) => {
      if (rank[level] < threshold) return;
      const entry: LogFields = { time: new Date().toISOString(), level, msg, ...base, ...fields };
      // An Error's name, message and stack are not its own enumerable properties: JSON.stringify
      // wrote kafkajs's `error` field as {}. Any field holding one is written as these three.
      for (const [key, value] of Object.entries(entry)) if (value instanceof Error) entry[key] = { name: value.name, message: value.message, stack: value.stack };
      write(JSON.stringify(entry));
    };
    return {
      debug: (m, f) => emit('debug', m, f),
      info: (m, f) => emit('info', m, f),
      warn: (m, f) => emit('warn', m, f),
      error: (m, f) => emit('error', m, f),
      child: (fields) => make({ ...base, ...fields }),
      enabled: (level) => rank[level] >= threshold,
      warnRepeating: (kind, m, f) => {
        if (rank.warn < threshold) return;
        const gate = repeats(`${m}\n${kind}`);
        if (gate.say) emit('warn', m, gate.heldBack > 0 ? { ...f, heldBack: gate.heldBack } : f);
      },
    };
  };
  return make(options.base ?? {});
}
