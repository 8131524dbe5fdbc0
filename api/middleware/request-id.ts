import type { Middleware } from 'koa';
import { requestIdOf } from '../../core/ids/index.js';
import type { ApiState } from '../state.js';

// Minted here, never taken from the client: the id is the usage event's idempotency key, so a
// caller-chosen value could collide with (and silently un-bill) another call. Behind the
// gateway, with `trustGateway` (TRUST_GATEWAY_REQUEST_ID), the gateway's X-Request-Id instead,
// which it sets on every request in place of the client's: a call it retries on a second
// replica then publishes the same usage event id, charged once (core/ids requestIdOf).
//
// Not an async function: it has nothing to do after the answer, and each async step in the
// middleware chain costs every call a promise and a turn (one such step, compress-answer's,
// cost ~8% of the financials benchmark's calls per second).
export function requestId(trustGateway = false): Middleware<ApiState> {
  return (ctx, next) => {
    const id = requestIdOf(ctx.req.headers['x-request-id'], trustGateway);
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    // Answers echo what the caller sent (a path in an error message): never let a browser
    // sniff one into something it would render or run.
    ctx.set('X-Content-Type-Options', 'nosniff');
    return next();
  };
}
