import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// Each service run alone with NODE_ENV=production and nothing else, as a first deployment that
// forgot its settings does: one start-up names every setting it lacks, in one message, where
// before each restart named the next one (REDIS_URL, then DATABASE_URL, then KAFKA_BROKERS).
const repoRoot = fileURLToPath(new URL('../', import.meta.url));

const redisUrl = 'REDIS_URL: required when NODE_ENV is production, where every API and tool server counts rate limits in one Redis; or set RATE_LIMIT_STORE=memory to count them in each process instead (N processes then allow N times each limit)';
const databaseUrl = 'DATABASE_URL is required when NODE_ENV is production: the embedded PostgreSQL is for running on one machine (npm start, tests)';
const kafkaBrokers = 'KAFKA_BROKERS: required when NODE_ENV is production, where usage events go through Kafka; or set USAGE_BUS=postgres to use the Postgres usage bus instead (every API, tool server and billing worker of the deployment must then use it)';

const services = [
  { entry: 'api/main.ts', problems: [redisUrl, databaseUrl, kafkaBrokers] },
  { entry: 'mcp/main.ts', problems: [redisUrl, databaseUrl, kafkaBrokers] },
  { entry: 'billing-worker/main.ts', problems: [databaseUrl, kafkaBrokers] },
  { entry: 'dashboard/main.ts', problems: [databaseUrl] },
];

/** A service's main.ts with only NODE_ENV=production (and what Node needs to run): its exit code and error log messages. */
function startInProduction(entry: string): Promise<{ code: number; errors: string[] }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', entry], { cwd: repoRoot, env: { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: 'production' }, timeout: 60_000 }, (err, stdout, stderr) => {
      const errors = `${stdout}\n${stderr}`.split('\n').flatMap((line) => {
        try {
          const parsed = JSON.parse(line) as { level?: unknown; msg?: unknown };
          return parsed.level === 'error' || parsed.level === 50 ? [String(parsed.msg)] : [];
        } catch {
          return [];
        }
      });
      resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, errors });
    });
  });
}

describe('a service started in production without its settings', () => {
  it('when only NODE_ENV=production is set then each service says every missing setting in one message and exits 1', async () => {
    const runs = await Promise.all(services.map((s) => startInProduction(s.entry)));
    for (const [i, run] of runs.entries()) {
      const { entry, problems } = services[i]!;
      expect({ entry, ...run }).toEqual({
        entry,
        code: 1,
        errors: [`could not start: Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`],
      });
    }
  }, 120_000);
});
