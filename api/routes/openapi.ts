import type { Router } from '@koa/router';
import type { AccessControl } from '../../core/access/index.js';
import { AppError, isAppError } from '../../core/errors/index.js';
import { rateLimitHeaders } from '../../core/ratelimit/index.js';
import { authenticateRequest } from '../authenticate-request.js';
import { requestLanguage } from '../language.js';
import type { OpenApiDocuments } from '../openapi/openapi-documents.js';
import type { ApiState } from '../state.js';

// The per-key machine-readable description: only what the key's organization may call, priced
// as that organization is billed. An organization with no plan gets client_not_configured, as
// its every call would: an empty document would leave its developer guessing why.
export function registerOpenApi(router: Router<ApiState>, deps: { access: AccessControl; documents: OpenApiDocuments }): void {
  router.get('/openapi.json', async (ctx) => {
    const principal = await authenticateRequest(ctx, deps.access).catch((err: unknown) => {
      throw withPublicDocument(err);
    });
    ctx.set(rateLimitHeaders(await deps.access.admit(principal, { requireConfigured: true })));
    const entitlements = await deps.access.entitlements(principal, 'endpoint');
    const language = requestLanguage(ctx);
    ctx.set('Content-Language', language);
    ctx.set('Vary', 'Authorization, Accept-Language');
    ctx.set('Cache-Control', 'private, no-store');
    ctx.body = await deps.documents.forOrganization(language, entitlements);
  });
}

/**
 * A 401 here also points to the document that needs no key: a client generator run without
 * one (or with a wrong one) can take that instead, every endpoint at default prices.
 */
function withPublicDocument(err: unknown): unknown {
  if (!isAppError(err) || err.status !== 401) return err;
  return new AppError(err.code, `${err.message} Without a key, GET /docs/openapi.json describes every endpoint at default prices.`, {
    cause: err, headers: err.headers, retryAfterSeconds: err.retryAfterSeconds,
  });
}
