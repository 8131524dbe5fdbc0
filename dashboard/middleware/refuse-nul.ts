import type { Middleware } from 'koa';
import { holdsNul } from '../../core/db/index.js';
import type { DashboardState } from '../state.js';

/** The path as the router will decode it; an undecodable one is left to the router (a 404). */
function decodedPath(path: string): string {
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

/**
 * No field of ours takes a NUL character (U+0000), and Postgres would refuse any statement that
 * carried one as a failure of its own: a request with one in its path, query or form gets a
 * 400 page that says so, before anything reads it. Runs after readForm.
 */
export function refuseNul(): Middleware<DashboardState> {
  return async (ctx, next) => {
    const query = Object.values(ctx.query).flat() as string[];
    const texts = [decodedPath(ctx.path), ...Object.keys(ctx.query), ...query, ...Object.keys(ctx.state.form), ...Object.values(ctx.state.form)];
    if (texts.some(holdsNul)) ctx.throw(400, ctx.state.t('error.nul'));
    await next();
  };
}
