import type { Router } from '@koa/router';
import { checkHealth } from '../../core/http-server/index.js';
import type { ApiState } from '../state.js';

export function registerHealthz(router: Router<ApiState>, deps: { checkDatabase(): Promise<void> }): void {
  router.get('/healthz', async (ctx) => {
    const answer = await checkHealth(deps.checkDatabase);
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
}
