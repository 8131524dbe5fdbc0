import { withoutApiKeysInUrl } from '../auth/api-key-format.js';
import type { Logger } from '../logging/index.js';
import { PROBE_PATHS } from './liveness.js';

/** What the request log reads of a request, whatever framework carries it (Koa's ctx has it). */
export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

export interface AccessLogOptions {
  /** A path with a secret in it (the dashboard's invitation and reset links): what is written instead. */
  redactPath?(path: string): string;
}

/**
 * One line per request: method, path (without its query string, with any key in it redacted,
 * percent-encoded or not: a caller who puts a key in the URL, refused, must not also get it
 * written to our logs; and cut to its first 1,000 characters), status, milliseconds and what `fieldsOf` adds (the request id, the organization and
 * key, what was asked). Support finds a caller's call by the requestId the caller was given. A
 * middleware in Koa's shape, for the API, the tool server and the dashboard.
 *
 * The level follows the answer: a 5xx at warn (what an SRE's log alerting watches), anything
 * else at info, but a probe of /healthz or /livez that succeeded at debug: compose checks every
 * 10 s, a load balancer more often, and ~8,600 identical lines a day per replica buried the rest.
 * A failing probe is said at its status's level.
 */
export function accessLog<C extends LoggedRequest>(
  logger: Logger,
  fieldsOf: (ctx: C) => Record<string, unknown>,
  options: AccessLogOptions = {},
): (ctx: C, next: () => Promise<unknown>) => Promise<unknown> {
  const redactPath = options.redactPath ?? ((path: string) => path);
  // Above warn nothing is written: skip the clock reads and the field object on every request.
  if (!logger.enabled('warn')) return (_ctx, next) => next();
  const infoToo = logger.enabled('info');
  const debugToo = logger.enabled('debug');
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const level = lineLevel(ctx.status, ctx.path);
      if (level === 'warn' || (level === 'info' && infoToo) || (level === 'debug' && debugToo)) {
        logger[level]('request', {
          method: ctx.method,
          path: loggedPath(redactPath(withoutApiKeysInUrl(ctx.path))),
          status: ctx.status,
          ms: Number(process.hrtime.bigint() - started) / 1e6,
          ...fieldsOf(ctx),
        });
      }
    }
  };
}

// A path may be as long as the server's header limit lets a request line be (16 KB): one request
// with no key could otherwise write a line that long. Its start is enough to tell what was asked.
const LOGGED_PATH = 1_000;

function loggedPath(path: string): string {
  return path.length > LOGGED_PATH ? `${path.slice(0, LOGGED_PATH)}… (${path.length} characters)` : path;
}

function lineLevel(status: number, path: string): 'debug' | 'info' | 'warn' {
  if (status >= 500) return 'warn';
  if (status < 400 && PROBE_PATHS.has(path)) return 'debug';
  return 'info';
}
