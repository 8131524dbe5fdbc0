import type { Middleware } from 'koa';
import type { Logger } from '../../core/logging/index.js';
import type { ApiState } from '../state.js';

// One line per request. The path is logged without its query string: a caller who puts a key
// in the URL (refused) must not also get it written to our logs.
export function accessLog(logger: Logger): Middleware<ApiState> {
  // At warn and above (what docs/api.md advises at high request rates) nothing is written:
  // skip the clock reads and the field object on every request.
  if (!logger.enabled('info')) return (_ctx, next) => next();
  return async (ctx, next) => {
    const started = process.hrtime.bigint();
    try {
      await next();
    } finally {
      logger.info('request', {
        requestId: ctx.state.requestId,
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
        organizationId: ctx.state.principal?.organizationId,
        keyId: ctx.state.principal?.keyId,
        errorCode: ctx.state.errorCode,
      });
    }
  };
}
