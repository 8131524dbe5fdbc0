import type { Router, RouterContext } from '@koa/router';
import { countMalformedAttempt, type AccessControl } from '../../core/access/index.js';
import { endpointCatalogue, notFoundMessage, paramRefusal, type CompanyLookupName, type CompanyLookups, type EndpointDefinition, type Meta } from '../../core/companies/endpoint-catalogue.js';
import { upperCaseIdentifier } from '../../core/companies/company-store.js';
import { AppError } from '../../core/errors/index.js';
import { occurredNow, type UsageSink } from '../../core/usage/index.js';
import { authenticateRequest } from '../authenticate-request.js';
import { successEnvelopeJson } from '../json-envelope.js';
import { callerGone, CLIENT_CLOSED_REQUEST } from '../../core/http-server/index.js';
import { rateLimitHeaders } from '../../core/ratelimit/index.js';
import type { ApiState } from '../state.js';
import { wrongMethod } from '../unknown-endpoint.js';

export interface CompanyEndpointDeps {
  access: AccessControl;
  store: CompanyLookups;
  usage: UsageSink;
  /** The answer as JSON text, when the store is a company cache (see ApiDeps). */
  lookupJson?(lookup: CompanyLookupName, code: string): Promise<string | null>;
}

/** `/companies/{fiscalCode}/report` → `/companies/:fiscalCode/report` */
export const toRouterPath = (template: string) => template.replace(/\{(\w+)\}/g, ':$1');

/** The name of these routes: GET only, so another method's 405 allows GET alone (api/app.ts). */
export const GET_ONLY_ROUTE = 'company-endpoint';

export function registerCompanyEndpoints(router: Router<ApiState>, deps: CompanyEndpointDeps): void {
  for (const endpoint of endpointCatalogue) {
    router.get(GET_ONLY_ROUTE, toRouterPath(endpoint.path), serve(endpoint, deps));
    // The same endpoint with its parameter empty (`/companies//report`: a client's URL built
    // from an empty variable) is that endpoint's invalid_params, naming the parameter, rather
    // than an unknown_endpoint that would send its author looking for a typo in the path.
    router.get(GET_ONLY_ROUTE, endpoint.path.replace(/\{\w+\}/, ''), serve(endpoint, deps));
  }
}

// Order matters: who is calling, is the request well-formed, may they call it (plan, flags,
// rate limit), then the work, then the bill. The usage event is awaited before the body is
// set, so a 2xx never leaves unless its event is durable; if publishing fails the caller gets
// an error and is not charged.
function serve(endpoint: EndpointDefinition, deps: CompanyEndpointDeps) {
  return async (ctx: RouterContext<ApiState>) => {
    // The router answers HEAD on GET routes; these endpoints are GET only (decisions.md).
    if (ctx.method !== 'GET') throw wrongMethod(ctx.method, ctx.path);
    const principal = await authenticateRequest(ctx, deps.access);

    const raw = ctx.params[endpoint.param.name] ?? '';
    const parsed = endpoint.param.schema.safeParse(raw);
    if (!parsed.success) {
      const headers = await countMalformedAttempt(deps.access, principal, endpoint.slug, 'endpoint');
      const { message, details } = paramRefusal(endpoint.param.name, parsed.error.issues);
      throw new AppError('invalid_params', message, { details, headers });
    }

    // The charge is held from here (for an organization near its balance), so parallel calls
    // are judged against each other's; released if the call is not served after all.
    const grant = await deps.access.authorize(principal, endpoint.slug, 'endpoint', ctx.state.requestId);
    ctx.set(rateLimitHeaders(grant.rateLimit));

    let dataJson: string | null;
    const meta: Meta = { requestId: ctx.state.requestId, endpoint: endpoint.slug, usage: { ...grant.measure } };
    try {
      // As text, not as an object: only this one string, not the answer's object graph (a
      // report: hundreds of objects), needs to outlive the usage event's batch write below, and
      // a cached answer is sent without being parsed or serialised again.
      // Upper-cased by the store (and the cache's key), not again here: only the refusal names it.
      const code = parsed.data;
      dataJson = deps.lookupJson ? await deps.lookupJson(endpoint.lookupName, code) : jsonOrNull(await deps.store[endpoint.lookupName](code));
      if (dataJson === null) throw new AppError('not_found', notFoundMessage(endpoint.param.name, upperCaseIdentifier(code)));
      // The caller hung up while the answer was looked up: nobody can receive it, so it is not
      // charged (core/http-server/caller-gone.ts). Nothing is sent; the access line says 499.
      if (callerGone(ctx.req)) {
        deps.access.release(grant);
        ctx.status = CLIENT_CLOSED_REQUEST;
        return;
      }
      await deps.usage.publish({
        v: 1,
        eventId: ctx.state.requestId,
        organizationId: principal.organizationId,
        keyId: principal.keyId,
        source: 'api',
        product: endpoint.slug,
        quantity: grant.measure.quantity,
        unit: grant.measure.unit,
        occurredAt: occurredNow(),
      });
    } catch (err) {
      deps.access.release(grant);
      throw err;
    }
    deps.access.charged(grant, ctx.state.requestId);
    // The same bytes and Content-Type as `ctx.body = { data, meta }`, without serialising a
    // cached answer again on every hit.
    // (Set as the header Koa would make of `ctx.type = 'application/json'`, skipping its MIME lookup.)
    ctx.set('Content-Type', 'application/json; charset=utf-8');
    ctx.body = successEnvelopeJson(dataJson, meta);
  };
}

const jsonOrNull = (data: unknown) => (data === null ? null : JSON.stringify(data));
