import type { Middleware } from 'koa';
import { newRequestId } from '../../core/ids/index.js';
import type { ApiState } from '../state.js';

// Always minted here, never taken from the client: the id is the usage event's idempotency
// key, so a caller-chosen value could collide with (and silently un-bill) another call.
export function requestId(): Middleware<ApiState> {
  return async (ctx, next) => {
    const id = newRequestId();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    await next();
  };
}
