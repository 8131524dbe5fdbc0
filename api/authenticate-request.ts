import type { ParameterizedContext } from 'koa';
import type { AccessControl, Principal } from '../core/access/index.js';
import { requestAuthorization } from '../core/auth/index.js';
import type { ApiState } from './state.js';

/** Only the Authorization header authenticates (core/auth/request-authorization.ts). */
export async function authenticateRequest(ctx: ParameterizedContext<ApiState>, access: AccessControl): Promise<Principal> {
  const principal = await access.authenticate(requestAuthorization(ctx.req));
  ctx.state.principal = principal;
  return principal;
}
