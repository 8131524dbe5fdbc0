import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors/index.js';
import { authorizationHeader } from './parse-authorization.js';

// Query parameters where clients commonly put a key (spec: never in a URL, where proxies and logs
// keep it); a key under any other name is recognised by its shape.
const KEY_QUERY_PARAMETERS = ['api_key', 'key', 'apikey', 'access_token'];
const KEY_IN_TEXT = /sk_(?:live|test)_[0-9A-Za-z]{32}/;

/**
 * The Authorization header a request authenticates with, as both edges (API and tool server)
 * read it: one header at most, and a key in the URL refused even when valid, with a message
 * that says why, so the caller does not think the key itself is bad.
 */
export function requestAuthorization(req: Pick<IncomingMessage, 'rawHeaders' | 'url'>): string | undefined {
  const authorization = authorizationHeader(req.rawHeaders);
  if (authorization === undefined) {
    const query = new URL(req.url ?? '/', 'http://localhost').searchParams;
    if (KEY_QUERY_PARAMETERS.some((p) => query.has(p)) || [...query.values()].some((v) => KEY_IN_TEXT.test(v))) {
      throw new AppError('missing_api_key', 'API keys are not accepted in the URL: send Authorization: Bearer <API_KEY>.');
    }
  }
  return authorization;
}
