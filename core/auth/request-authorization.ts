import type { IncomingMessage } from 'node:http';
import { AppError } from '../errors/index.js';
import { containsApiKey, urlContainsApiKey } from './api-key-format.js';
import { authorizationHeader } from './parse-authorization.js';

// Query parameters where clients commonly put a key (spec: never in a URL, where proxies and logs
// keep it); a key anywhere else in the URL is recognised by its shape.
const KEY_QUERY_PARAMETERS = ['api_key', 'key', 'apikey', 'access_token'];

/**
 * The Authorization header a request authenticates with, as both edges (API and tool server)
 * read it: one header at most, and a key in the URL refused even when valid, with a message
 * that says why, so the caller does not think the key itself is bad. Refused with a header
 * too: a client that sends the key both ways would otherwise keep working while every proxy
 * and gateway access log on the way (deploy/nginx.conf's included) keeps the key from its URL.
 * Anywhere in the URL: a query value or name, or the path (a key pasted in place of a company
 * code would otherwise come back in the not_found message).
 */
export function requestAuthorization(req: Pick<IncomingMessage, 'rawHeaders' | 'url'>): string | undefined {
  const authorization = authorizationHeader(req.rawHeaders);
  const url = req.url ?? '';
  if (urlContainsApiKey(url)) throw keyInUrl();
  // Most calls have no query string: nothing more to look at, and no URL to parse on the hot path.
  if (!url.includes('?')) return authorization;
  const query = new URL(url, 'http://localhost').searchParams;
  // Decoded this time (a percent-encoded key). With a header, only what is a key by its shape:
  // `?key=…` may be something else of the caller's.
  const keyInQuery = [...query].some(([name, value]) => containsApiKey(name) || containsApiKey(value)) || (authorization === undefined && KEY_QUERY_PARAMETERS.some((p) => query.has(p)));
  if (keyInQuery) throw keyInUrl();
  return authorization;
}

const keyInUrl = () => new AppError('missing_api_key', 'API keys are not accepted in the URL: send Authorization: Bearer <API_KEY> only, and take the key out of the URL.');
