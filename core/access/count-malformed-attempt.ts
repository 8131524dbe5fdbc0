import { isAppError } from '../errors/index.js';
import { rateLimitHeaders } from '../ratelimit/index.js';
import type { AccessControl, Principal, ProductKind } from './access-control.js';

/**
 * A malformed call (a bad path parameter, bad tool arguments) still counts against the
 * organization's rate limit and carries the RateLimit-* headers, as every authenticated answer
 * does; but the caller learns about the malformed input first, whatever the plan or allowance
 * says, so a refusal of the attempt is not raised here: its headers are returned instead.
 * Both edges (API and tool server) count such calls this way.
 */
export async function countMalformedAttempt(access: AccessControl, principal: Principal, product: string, kind: ProductKind): Promise<Record<string, string> | undefined> {
  try {
    return rateLimitHeaders((await access.authorize(principal, product, kind)).rateLimit);
  } catch (err) {
    if (isAppError(err)) return err.headers;
    throw err;
  }
}
