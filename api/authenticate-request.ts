import type { ParameterizedContext } from 'koa';
import type { AccessControl, Principal } from '../core/access/index.js';
import { authorizationHeader } from '../core/auth/index.js';
import { AppError } from '../core/errors/index.js';
import type { ApiState } from './state.js';

const keyQueryParameters = ['api_key', 'key', 'apikey', 'access_token'];

/**
 * Only the Authorization header authenticates. A key in the URL is refused even when valid
 * (spec: keys are never placed in a URL, where proxies and logs keep them); the message says
 * why, so the caller does not think the key itself is bad.
 */
export async function authenticateRequest(ctx: ParameterizedContext<ApiState>, access: AccessControl): Promise<Principal> {
  const authorization = authorizationHeader(ctx.req.rawHeaders);
  if (authorization === undefined && keyQueryParameters.some((p) => ctx.query[p] !== undefined)) {
    throw new AppError('missing_api_key', 'API keys are not accepted in the URL: send Authorization: Bearer <API_KEY>.');
  }
  const principal = await access.authenticate(authorization);
  ctx.state.principal = principal;
  return principal;
}
