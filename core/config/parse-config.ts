import type { z } from 'zod';
import { configSchema, type Config } from './config-schema.js';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/**
 * The only place that reads the environment. Called once by each composition root (main.ts);
 * everything else receives the typed Config. All problems are reported together so an
 * operator fixes them in one go.
 */
export function parseConfig(env: Record<string, string | undefined>): Config;
/** The same parsing with another schema (tests; a process with variables of its own). */
export function parseConfig<S extends z.ZodType>(env: Record<string, string | undefined>, schema: S): z.output<S>;
export function parseConfig(env: Record<string, string | undefined>, schema: z.ZodType = configSchema): unknown {
  // An empty variable means "not set": compose files and shells often export VAR= . So does
  // one of only spaces, which z.coerce.number() would otherwise read as 0 (API_PORT=' ': a
  // random port).
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`));
  }
  return result.data;
}
