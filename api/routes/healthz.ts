import type { Router } from '@koa/router';
import { checkHealth, livenessAnswer } from '../../core/http-server/index.js';
import type { UsageSink } from '../../core/usage/index.js';
import type { ApiState } from '../state.js';

export function registerHealthz(router: Router<ApiState>, deps: { checkDatabase(): Promise<void>; usage: UsageSink; access: { rateLimitStore(): string } }): void {
  router.get('/healthz', async (ctx) => {
    const answer = await checkHealth({ database: deps.checkDatabase, usageBus: deps.usage.reachable?.bind(deps.usage), figures: () => ({ rateLimitStore: deps.access.rateLimitStore() }) });
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
  // Liveness (core/http-server/liveness.ts): no dependency checked, no key, nothing billed.
  router.get('/livez', (ctx) => {
    const answer = livenessAnswer();
    ctx.status = answer.status;
    ctx.body = answer.body;
  });
}
