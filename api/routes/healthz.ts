import type { Router } from '@koa/router';
import type { ApiState } from '../state.js';

const deadlineMs = 1_000;

// Liveness plus one cheap database round trip, bounded so a probe never hangs on a dead pool;
// no key needed and nothing about the data revealed.
export function registerHealthz(router: Router<ApiState>, deps: { checkDatabase(): Promise<void> }): void {
  router.get('/healthz', async (ctx) => {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error('health check timed out')), deadlineMs); });
    try {
      await Promise.race([deps.checkDatabase(), deadline]);
      ctx.body = { status: 'ok' };
    } catch {
      ctx.status = 503;
      ctx.body = { status: 'unavailable', checks: { database: 'unreachable' } };
    } finally {
      clearTimeout(timer);
    }
  });
}
