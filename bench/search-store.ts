import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Knex } from 'knex';
import { parseConfig } from '../core/config/index.js';
import { createDb } from '../core/db/index.js';
import { createLogger, type Logger } from '../core/logging/index.js';
import { openScratchDatabase } from './scratch-database.js';

// What the search benchmarks (company-search.ts, people-search.ts) share: a store of their own,
// the searches' dependencies with no deadline (the bench times the calls), and the timing of a
// call repeated.

export interface SearchStore {
  db: Knex;
  deps: { db: Knex; queryTimeoutMs: number; logger: Logger };
  description: string;
  /** Closes the pool, drops the database (or says where it was kept) and removes the folder. */
  close(): Promise<void>;
}

/**
 * A fresh database named `<prefix>_<time>` on DATABASE_URL's server, or an embedded PostgreSQL in
 * a temporary folder when it is unset; not migrated. `keep` leaves it in place for EXPLAIN.
 */
export async function openSearchStore(options: { prefix: string; keep: boolean; log: (line: string) => void }): Promise<SearchStore> {
  const config = parseConfig(process.env);
  const logger = createLogger({ level: 'warn' });
  const workDir = await mkdtemp(path.join(os.tmpdir(), `${options.prefix.replace(/_/g, '-')}-`));
  // The embedded server runs as the postgres user when we are root: it must traverse this folder.
  await chmod(workDir, 0o755);
  const scratch = await openScratchDatabase({ prefix: options.prefix, databaseUrl: config.DATABASE_URL, workDir, logger });
  const db = createDb({ connectionString: scratch.url, poolMax: 2, applicationName: options.prefix.replace(/_/g, '-') });
  return {
    db,
    deps: { db, queryTimeoutMs: 600_000, logger },
    description: scratch.description,
    close: async () => {
      await db.destroy();
      if (options.keep) options.log(`kept: ${scratch.description}`);
      else await scratch.drop();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/** `call` timed `reps` times after `warmUps` untimed calls: its p50 and p95 in ms, formatted. */
export async function timeCalls(call: () => Promise<unknown>, reps: number, warmUps: number, digits: number): Promise<string> {
  const timings: number[] = [];
  for (let i = 0; i < reps + warmUps; i++) {
    const started = performance.now();
    await call();
    if (i >= warmUps) timings.push(performance.now() - started);
  }
  timings.sort((a, b) => a - b);
  const pct = (p: number) => timings[Math.min(timings.length - 1, Math.floor((p / 100) * timings.length))] ?? NaN;
  return `${fmt(pct(50), digits).padStart(9)} ${fmt(pct(95), digits).padStart(9)}`;
}

export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The machine's load average and CPU count, as the figures' context. */
export const machineLoad = () => `load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')} on ${os.cpus().length} CPUs`;
