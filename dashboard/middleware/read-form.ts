import type { Middleware } from 'koa';
import { closeAfterAnswer } from '../../core/http-server/index.js';
import type { DashboardState } from '../state.js';

const LIMIT_BYTES = 64 * 1024;

/** application/x-www-form-urlencoded bodies of our own forms, into ctx.state.form. */
export function readForm(): Middleware<DashboardState> {
  return async (ctx, next) => {
    ctx.state.form = {};
    if (ctx.method === 'POST' && ctx.is('application/x-www-form-urlencoded')) {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of ctx.req) {
        size += (chunk as Buffer).length;
        if (size > LIMIT_BYTES) {
          closeAfterAnswer(ctx.res);
          ctx.throw(413, 'form too large');
        }
        chunks.push(chunk as Buffer);
      }
      const params = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
      for (const [k, v] of params) ctx.state.form[k] = v;
    }
    await next();
  };
}
