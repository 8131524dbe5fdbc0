import { withoutApiKeys } from '../auth/api-key-format.js';
import type { Logger } from '../logging/index.js';

/** What the request log reads of a request, whatever framework carries it (Koa's ctx has it). */
export interface LoggedRequest {
  method: string;
  path: string;
  status: number;
}

/**
 * One line per request, at info: method, path (without its query string, and with any key in
 * it redacted: a caller who puts a key in the URL, refused, must not also get it written to our
 * logs), status, milliseconds and
 * what `fieldsOf` adds (the request id, the organization and key, what was asked). Support finds
 * a caller's call by the requestId the caller was given. A middleware in Koa's shape, for the
 * API and the tool server.
 */
export function accessLog<C extends LoggedRequest>(logger: Logger, fieldsOf: (ctx: C) => Record<string, unknown>): (ctx: C, next: () => Promise<unknown>) => Promise<unknown> {
  // At warn and above (what docs/api.md advises at high request rates) nothing is written:
  // skip the clock reads and the field object on every request.
  if (!logger.enabled('info')) return (_ctx, next) => next();
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      logger.info('request', {
        method: ctx.method,
        path: withoutApiKeys(ctx.path),
        status: ctx.status,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
        ...fieldsOf(ctx),
      });
    }
  };
}
