import type { Middleware } from 'koa';
import { AppError, errorMessage, isAppError, toErrorObject } from '../../core/errors/index.js';
import type { Logger } from '../../core/logging/index.js';
import type { ApiState } from '../state.js';
import { wwwAuthenticateFor } from '../www-authenticate.js';

// The HTTP edge's one error mapper: whatever is thrown below becomes the `{ error }` envelope
// with the catalogue's status. Only AppError messages are shown; anything else is logged in
// full here and answered as internal_error, so no stack, SQL or driver text reaches a caller.
//
// A dependency's failure (a 5xx AppError: metering, plan state or the company store unavailable)
// comes with every call while it lasts: said with its cause's message, once per code every 10 s
// with how many were held back; the access log has each call. A bug (internal_error) is said
// every time, with its stack.
export function errorEnvelope(logger: Logger): Middleware<ApiState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const appError = toAppError(err);
      const requestId = ctx.state.requestId;
      if (!isAppError(err) && appError.code === 'internal_error') logger.error('unhandled error', { requestId, err });
      else if (appError.status >= 500) logger.warnRepeating(appError.code, 'request failed', { requestId, code: appError.code, cause: errorMessage(appError.cause ?? err) });
      if (ctx.headerSent) return;

      const { error } = toErrorObject(appError, requestId);
      ctx.status = appError.status;
      for (const [name, value] of Object.entries(appError.headers ?? {})) ctx.set(name, value);
      if (appError.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(Math.max(1, Math.ceil(appError.retryAfterSeconds))));
      // A 401 names its scheme, as the tool server's do.
      if (appError.status === 401) ctx.set('WWW-Authenticate', wwwAuthenticateFor(appError.code));
      ctx.body = { error };
      ctx.state.errorCode = error.code;
    }
  };
}

/** Koa's and the router's own HTTP errors (404, 405, 501, a malformed URL ...) mapped onto the catalogue. */
function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  const status = typeof (err as { status?: unknown })?.status === 'number' ? (err as { status: number }).status : undefined;
  if (status === 404 || status === 405 || status === 501) return new AppError('unknown_endpoint', undefined, { cause: err });
  if (status !== undefined && status >= 400 && status < 500 && (err as { expose?: boolean }).expose) {
    return new AppError('invalid_params', undefined, { cause: err });
  }
  return new AppError('internal_error', undefined, { cause: err });
}
