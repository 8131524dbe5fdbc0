import type { Middleware } from 'koa';
import { newRequestId } from '../../core/ids/index.js';
import type { ApiState } from '../state.js';

// Always minted here, never taken from the client: the id is the usage event's idempotency
// key, so a caller-chosen value could collide with (and silently un-bill) another call.
//
// Not an async function: it has nothing to do after the answer, and each async step in the
// middleware chain costs every call a promise and a turn (one such step, compress-answer's,
// cost ~8% of the financials benchmark's calls per second).
export function requestId(): Middleware<ApiState> {
  return (ctx, next) => {
    const id = newRequestId();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    return next();
  };
}
