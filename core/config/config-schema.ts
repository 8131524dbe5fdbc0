import { z } from 'zod';

// Environment variables arrive as strings; these helpers turn them into typed values and
// keep the error message naming the variable, so one start-up error lists every problem.
// Decimal digits only (a leading minus where negatives make sense): z.coerce.number() read
// API_PORT=0x1F90 as 8080 and 1e3 as 1000, forms the CLI's own options refuse, and said
// "expected number, received NaN" for abc without the value. Each refusal says what was given.
function shownValue(value: string): string {
  const cut = value.length > 40 ? `${value.slice(0, 40)}…` : value;
  return /^[!-~]*$/.test(cut) ? cut : JSON.stringify(cut);
}
interface WholeNumberRange {
  min: number;
  max?: number;
  /** Said after a bound, e.g. " (milliseconds)". */
  unit?: string;
  /** How the range reads instead of "at least/at most" (ports). */
  range?: string;
}
const wholeNumber = ({ min, max = Number.MAX_SAFE_INTEGER, unit = '', range }: WholeNumberRange) => z
  .string()
  .transform((raw, ctx) => {
    const value = raw.trim();
    const digits = min < 0 ? /^-?\d+$/ : /^\d+$/;
    if (!digits.test(value)) {
      ctx.addIssue({ code: 'custom', message: `must be a whole number in decimal digits, got ${shownValue(raw)}` });
      return z.NEVER;
    }
    const n = Number(value);
    if (n < min || n > max) {
      const bound = range ?? (n < min ? `at least ${min}${unit}` : `at most ${max}${unit}`);
      ctx.addIssue({ code: 'custom', message: `must be ${bound}, got ${shownValue(raw)}` });
      return z.NEVER;
    }
    return n;
  });
const PORT = { min: 0, max: 65_535, range: 'a port from 0 to 65535' };
const port = (fallback: number) => wholeNumber(PORT).default(fallback);
const optionalPort = wholeNumber(PORT).optional();
const positiveInt = (fallback: number) => wholeNumber({ min: 1 }).default(fallback);
// At most what Postgres takes for a timeout setting, and what setTimeout takes (a 32-bit int:
// beyond it, a timer fires at once).
const MAX_MS = 2_147_483_647;
const positiveMs = (fallback: number) => wholeNumber({ min: 1, max: MAX_MS, unit: ' (milliseconds)' }).default(fallback);
// A URL of the schemes the variable's client speaks: `localhost:3000` parses as a URL of the
// scheme "localhost:", and a mysql:// DATABASE_URL got as far as pg's protocol error.
const optionalUrl = (protocol: RegExp, expected: string) => z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .pipe(z.url({ protocol, error: `must be ${expected}` }).optional())
  .optional();
const httpUrl = optionalUrl(/^https?$/, 'an http:// or https:// URL');
// An address we print for others to call: clients append paths to it, and the served guide
// writes it into shell commands in single quotes, so it carries no user, query, fragment, quote
// or space (https://api.example.com/italy was fine; ...?x=1 or a ' made commands that fail).
function isPublicAddress(value: string): boolean {
  if (/[\s'"`\\?#]/.test(value) || !URL.canParse(value)) return false;
  const url = new URL(value);
  return !url.username && !url.password;
}
const publicAddress = httpUrl.refine((value) => value === undefined || isPublicAddress(value), {
  message: 'must be an address clients append paths to, like https://api.example.com or https://example.com/api: no user, ?query, #fragment, quotes or spaces',
});
const flagValue = z.enum(['true', 'false', '1', '0', 'yes', 'no']).transform((v) => v === 'true' || v === '1' || v === 'yes');
const flag = (fallback: boolean) => flagValue.default(fallback);

// What an Origin header holds: scheme://host[:port], nothing after it, no user info. Browsers
// send it lower-case and without the scheme's default port, so entries are kept in that form
// (URL.origin) and a header is compared as it comes.
const ORIGIN_FORM = /^https?:\/\/[^/?#@\s]+$/i;
function originProblem(entry: string): string | undefined {
  if (entry.includes('*')) return `"${entry}": wildcards are not supported; list each origin, or give * alone to allow any`;
  let url: URL | undefined;
  try {
    url = new URL(entry);
  } catch {
    url = undefined;
  }
  if (!url || !ORIGIN_FORM.test(entry)) {
    const example = url && /^https?:$/.test(url.protocol) ? url.origin : 'https://app.example.com';
    return `"${entry}" is not an origin: write http(s)://host[:port] with nothing after it, e.g. ${example}`;
  }
  return undefined;
}

export const configSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  /** Where the embedded database, demo credentials and local spool live. */
  DATA_DIR: z.string().min(1).default('.data'),

  /** Unset: a real embedded PostgreSQL is started under DATA_DIR. */
  DATABASE_URL: optionalUrl(/^(postgres(ql)?|socket)$/, 'a postgres://, postgresql:// or socket: URL'),
  DATABASE_POOL_MAX: positiveInt(10),
  EMBEDDED_PG_PORT: port(54329),
  /** Run pending migrations when a process starts (the compose file runs a migrate job instead). */
  MIGRATE_ON_START: flag(true),
  /**
   * How long a migration may wait for a table lock before it fails, rolled back, rather than
   * keep every reader of that table waiting behind it (core/db/migrate.ts). `0`: no limit.
   */
  MIGRATION_LOCK_TIMEOUT_MS: wholeNumber({ min: 0, max: MAX_MS, unit: ' (milliseconds)' }).default(5_000),

  HOST: z.string().min(1).default('127.0.0.1'),
  API_PORT: port(3000),
  MCP_PORT: port(3001),
  DASHBOARD_PORT: port(3002),
  /**
   * The billing worker's GET /healthz (billing-worker/main.ts). Unset: it listens on no port, as
   * before; `npm start` runs the worker in-process and never listens on it.
   */
  BILLING_WORKER_PORT: optionalPort,
  /**
   * How long one usage batch's transaction may stay open in the billing worker before the
   * worker counts itself stalled (a database connection that stopped answering), answers 503
   * on /healthz and exits 1 for its supervisor to restart it. Postgres also ends the worker's
   * sessions left idle in a transaction this long, releasing their locks. Far above what a
   * batch takes (tens of milliseconds); at least a second.
   */
  // At most what Postgres takes for idle_in_transaction_session_timeout (a 32-bit int).
  BILLING_BATCH_STALL_MS: wholeNumber({ min: 1_000, max: MAX_MS, unit: ' (milliseconds)' }).default(120_000),
  /**
   * Browser origins the tool server accepts besides loopback ones and PUBLIC_MCP_URL's: a request
   * whose Origin header is none of them is refused (DNS-rebinding protection, mcp/origin-check.ts).
   * Comma-separated exact origins (https://app.example.com), or `*` alone for any origin.
   */
  MCP_ALLOWED_ORIGINS: z
    .string()
    .optional()
    .transform((value, ctx): '*' | string[] | undefined => {
      if (value === undefined) return undefined;
      const entries = value.split(',').map((e) => e.trim()).filter(Boolean);
      if (entries.includes('*')) {
        if (entries.length > 1) ctx.addIssue({ code: 'custom', message: '* allows any origin: give it alone, not in a list' });
        return '*';
      }
      for (const entry of entries) {
        const problem = originProblem(entry);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }
      return entries.map((entry) => URL.canParse(entry) ? new URL(entry).origin : entry);
    }),
  /** Addresses printed and written to demo.json; default to http://HOST:PORT. */
  PUBLIC_BASE_URL: publicAddress,
  PUBLIC_MCP_URL: publicAddress,
  PUBLIC_DASHBOARD_URL: publicAddress,
  /**
   * Whether the dashboard believes X-Forwarded-For/-Proto/-Host. Set it only when a proxy in
   * front of the dashboard sets them: without one, anyone could write a sign-in attempt's IP.
   */
  TRUST_PROXY: flag(false),
  /**
   * Whether the API and the tool server take a call's request id from the X-Request-Id header
   * (req_ + UUID, else a fresh one is made). Set it only behind deploy/nginx.conf, which sets
   * that header on every request (replacing the client's) so that a call it retries on a second
   * replica keeps its usage event id and is charged once; and only where clients cannot reach the
   * replicas except through it: the id is the ledger's idempotency key, so a client that chose
   * it could have another call's charge dropped as a duplicate.
   */
  TRUST_GATEWAY_REQUEST_ID: flag(false),
  /**
   * The companies the OpenAPI documents take their examples from, by fiscal code: the first for
   * every endpoint, the second (optional) for the profile's large-company shape. Unset: the first
   * company with filed figures (and the first large one), fine for sample data; with real data,
   * name companies whose data may be shown to anyone, since /docs/openapi.json needs no key.
   */
  OPENAPI_EXAMPLE_COMPANIES: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean) : undefined))
    .pipe(z.array(z.string().regex(/^(?:\d{11}|[A-Z0-9]{16})$/, 'each must be a fiscal code: 11 digits or 16 letters and digits')).min(1).max(2, 'at most two: the example company, then a large one').optional()),

  /**
   * `kafka` or `postgres`: which bus carries usage events (usage-bus.ts). Unset: Kafka when
   * KAFKA_BROKERS is set, else the Postgres bus, which in production must be asked for by name.
   */
  USAGE_BUS: z.enum(['kafka', 'postgres']).optional(),
  /** Unset: usage events go through the Postgres bus (see USAGE_BUS). Comma-separated host:port list. */
  KAFKA_BROKERS: z
    .string()
    .trim()
    .optional()
    .transform((v) => (v ? v.split(',').map((b) => b.trim()).filter(Boolean) : undefined))
    .pipe(z.array(z.string().regex(/^[^\s:]+:\d+$/, 'each broker must be host:port')).min(1).optional()),
  KAFKA_CLIENT_ID: z.string().min(1).default('italian-company-data'),
  KAFKA_USAGE_TOPIC: z.string().min(1).default('usage-events'),
  KAFKA_DEAD_LETTER_TOPIC: z.string().min(1).default('usage-events-dlq'),
  KAFKA_PARTITIONS: positiveInt(6),
  KAFKA_CONSUMER_GROUP: z.string().min(1).default('billing-worker'),

  /**
   * Whether alert webhooks may go to private, loopback or link-local addresses. Unset: yes
   * outside production (a developer's receiver on localhost), no in production (an admin's
   * webhook address must not reach our internal network). See core/alerts/post-webhook.ts.
   */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: flagValue.optional(),

  /**
   * `redis` or `memory`: where the API and tool server count rate limits (rate-limit-store.ts).
   * Unset: Redis when REDIS_URL is set, else in process, which in production must be asked for
   * by name.
   */
  RATE_LIMIT_STORE: z.enum(['redis', 'memory']).optional(),
  /** Unset: rate limits are counted in process; set to share them across instances. */
  REDIS_URL: optionalUrl(/^rediss?$/, 'a redis:// or rediss:// URL'),
  /**
   * Put before each organization id in the rate limiter's Redis keys. Deployments sharing one
   * Redis (staging and production, two separate databases whose org ids may collide) each set
   * their own, or they count every organization's calls together. The default is the keys of
   * before, so a rolling upgrade keeps counting in the same ones.
   */
  REDIS_KEY_PREFIX: z
    .string()
    .max(64, 'must be at most 64 characters')
    // Visible ASCII only: a space, tab or control character in a key is a paste mistake, and
    // one shows up in no redis-cli listing as what it is.
    .regex(/^[!-~]+$/, 'must be letters, digits or punctuation, without spaces or control characters')
    .default('ratelimit:'),

  /** How long a verified key is trusted without asking Postgres again (revocation backstop). */
  KEY_CACHE_TTL_MS: positiveMs(30_000),
  /** How long plan, allowance and flag state is cached (flag-change backstop). */
  ENTITLEMENT_CACHE_TTL_MS: positiveMs(1_000),
  /** Deadline for one company-store query before the call fails with upstream_timeout. */
  COMPANY_QUERY_TIMEOUT_MS: positiveMs(2_000),

  /** Sample companies loaded by `npm start` when the company store is empty. */
  SAMPLE_COMPANIES: wholeNumber({ min: 0 }).default(2_000),
  SAMPLE_SEED: wholeNumber({ min: Number.MIN_SAFE_INTEGER }).default(20_240_601),
});

export type Config = z.infer<typeof configSchema>;
export const configVariables = Object.keys(configSchema.shape) as (keyof Config)[];
