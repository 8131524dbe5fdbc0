import type { Middleware, ParameterizedContext } from 'koa';
import { accessLog } from '../../core/http-server/index.js';
import { newRequestId } from '../../core/ids/index.js';
import type { Logger } from '../../core/logging/index.js';
import type { DashboardState } from '../state.js';

// The dashboard's request log, the API's and the tool server's shape (core/http-server's
// accessLog): one JSON line per request with method, path, status, ms and the X-Request-Id its
// answer carries, and who asked once signed in. Before, only a 5xx was logged: a refused sign-in
// (403) or a CSRF failure left no trace. Nothing the person typed is written: no form field, no
// cookie, no query string; the one-time tokens of invitation and reset links are cut out of the
// path, as they let whoever reads them in.

const TOKEN_PATHS = /^\/(invitations|password-reset)\/[^/]+/;
const ORGANIZATION_PATH = /^\/(?:orgs|operator\/organizations)\/([^/]+)/;

export function redactDashboardPath(path: string): string {
  return path.replace(TOKEN_PATHS, '/$1/[redacted]');
}

/** Mints the request id (X-Request-Id on every answer, error pages included) and logs the request. */
export function requestLog(logger: Logger): Middleware<DashboardState> {
  const log = accessLog<ParameterizedContext<DashboardState>>(
    logger,
    (ctx) => ({
      requestId: ctx.state.requestId,
      userId: ctx.state.session?.user.id,
      // The organization whose page was asked for (whether or not it was shown), when signed in.
      organizationId: ctx.state.session ? ORGANIZATION_PATH.exec(ctx.path)?.[1] : undefined,
    }),
    { redactPath: redactDashboardPath },
  );
  return (ctx, next) => {
    const id = newRequestId();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    return log(ctx, next);
  };
}
