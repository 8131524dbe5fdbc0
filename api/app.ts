import Koa from 'koa';
import { Router } from '@koa/router';
import type { AccessControl } from '../core/access/index.js';
import type { CompanyLookupName, CompanyLookups } from '../core/companies/endpoint-catalogue.js';
import type { Logger } from '../core/logging/index.js';
import type { UsageSink } from '../core/usage/index.js';
import { accessLog } from './middleware/access-log.js';
import { compressAnswer } from './middleware/compress-answer.js';
import { errorEnvelope } from './middleware/error-envelope.js';
import { requestId } from './middleware/request-id.js';
import { createOpenApiDocuments } from './openapi/openapi-documents.js';
import { GET_ONLY_ROUTE, registerCompanyEndpoints } from './routes/company-endpoints.js';
import { registerDocs } from './routes/docs.js';
import { registerHealthz } from './routes/healthz.js';
import { registerOpenApi } from './routes/openapi.js';
import type { ApiState } from './state.js';
import { unknownPath, wrongMethod } from './unknown-endpoint.js';

export interface ApiDeps {
  access: AccessControl;
  store: CompanyLookups;
  usage: UsageSink;
  /** The company cache's answers as JSON text (CompanyCache.json), so a cache hit is sent
   * without being parsed or serialised; without it every answer is stringified. */
  lookupJson?(lookup: CompanyLookupName, code: string): Promise<string | null>;
  logger: Logger;
  /** Base URL written into the OpenAPI `servers` (PUBLIC_BASE_URL or http://HOST:API_PORT). */
  publicBaseUrl: string;
  /** The tool server's address, for the getting-started guide's MCP commands (PUBLIC_MCP_URL,
   * or a local start's, `localUrl`); undefined: not known (a deployment that names its API but
   * not its tool server), the guide's command has a placeholder. */
  publicMcpUrl: string | undefined;
  /** One cheap round trip to the database, for /healthz: the process's OpenDatabase.probe. */
  checkDatabase(): Promise<void>;
  /** A fiscal code of a real company for the OpenAPI examples (a large one: for the profile's
   * peers branch); null when the store has none. */
  findExampleCompany(kind?: 'large'): Promise<string | null>;
  /** TRUST_GATEWAY_REQUEST_ID: take the call's request id from the gateway's X-Request-Id. */
  trustGatewayRequestId?: boolean;
}

/** The HTTP API as a Koa app, not listening: main.ts, `npm start` and tests mount it. */
export function createApp(deps: ApiDeps): Koa<ApiState> {
  const app = new Koa<ApiState>();
  const documents = createOpenApiDocuments({
    store: deps.store,
    findExampleCompany: deps.findExampleCompany,
    serverUrl: deps.publicBaseUrl,
    logger: deps.logger,
  });

  // Paths as documented, to the letter: /COMPANIES/… or a trailing slash is an unknown path.
  const router = new Router<ApiState>({ sensitive: true, strict: true });
  registerHealthz(router, deps);
  registerCompanyEndpoints(router, deps);
  registerOpenApi(router, { access: deps.access, documents });
  registerDocs(router, { documents, publicBaseUrl: deps.publicBaseUrl, publicMcpUrl: deps.publicMcpUrl });

  app.use(requestId(deps.trustGatewayRequestId));
  app.use(accessLog(deps.logger));
  app.use(compressAnswer(deps.logger));
  app.use(errorEnvelope(deps.logger));
  app.use(router.routes());
  // Not the router's allowedMethods(), whose answers are not our envelope: a path that exists
  // asked with another method is 405 `unknown_endpoint` with `Allow` (decisions.md), any other
  // path 404 `unknown_endpoint`.
  const isGetRoute = (path: string) => router.match(path, 'GET').route;
  app.use((ctx) => {
    const match = router.match(ctx.path, 'GET');
    if (!match.route) throw unknownPath(ctx.method, ctx.path, isGetRoute);
    // The router answers HEAD on every GET route; the company endpoints refuse it (GET only).
    const getOnly = match.pathAndMethod.some((layer) => layer.name === GET_ONLY_ROUTE);
    throw wrongMethod(ctx.method, ctx.path, getOnly ? ['GET'] : ['GET', 'HEAD']);
  });
  // Everything is handled by errorEnvelope; this only sees failures while writing a response.
  app.silent = true;
  app.on('error', (err) => deps.logger.warn('response error', { err }));
  return app;
}
