import type { Middleware } from 'koa';
import type { Logger } from '../../core/logging/index.js';
import type { DashboardState } from '../state.js';

/**
 * Without TRUST_PROXY the dashboard takes each request's address from its socket. Behind a
 * proxy that is the proxy's, for everyone: they all share one address's password-check places
 * (4: one busy person's sign-ins can turn the others away) and sign-in attempts record the
 * proxy. Nothing shows that until someone is refused, so the first request that says it came
 * through a proxy (X-Forwarded-For) is the cue to say so, once per process. It may come from a
 * client writing the header itself: the line says that such a header is then right to ignore.
 */
export function untrustedProxyHint(logger: Logger): Middleware<DashboardState> {
  let said = false;
  return async (ctx, next) => {
    if (!said && !ctx.app.proxy && ctx.get('x-forwarded-for') !== '') {
      said = true;
      logger.warn(
        'a request came with X-Forwarded-For, which the dashboard ignores as TRUST_PROXY is false: behind a proxy that sets it, everyone signs in '
          + "from the proxy's address and shares its password-check places, so set TRUST_PROXY=true; with no proxy in front, a client wrote it and ignoring it is right",
        { socketAddress: ctx.request.socket.remoteAddress ?? null },
      );
    }
    await next();
  };
}
