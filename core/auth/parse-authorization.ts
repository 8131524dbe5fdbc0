import { AppError } from '../errors/index.js';

// RFC 9110: the scheme is case-insensitive and separated by one or more spaces. Anything else
// (Basic, a bare token, an empty Bearer) is "no API key" rather than "a wrong key"; the message
// says which of those it was, so a caller with a mangled header does not look for a bad key.
const BEARER = /^bearer +(\S+) *$/i;
const BEARER_SCHEME = /^bearer(?: |$)/i;

/**
 * The request's one Authorization header. Node keeps only the first of repeated Authorization
 * headers, so which key counted would depend on their order: two are refused, like two keys in
 * one header. `rawHeaders` is Node's list of names and values (IncomingMessage.rawHeaders).
 */
export function authorizationHeader(rawHeaders: readonly string[]): string | undefined {
  let value: string | undefined;
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    if (rawHeaders[i]!.toLowerCase() === 'authorization') {
      count += 1;
      value = rawHeaders[i + 1];
    }
  }
  if (count > 1) throw new AppError('missing_api_key', `The request has ${count} Authorization headers: send one, Authorization: Bearer <API_KEY>.`);
  return value === '' ? undefined : value;
}

export function bearerToken(authorization: string | undefined): string {
  if (authorization === undefined || authorization.trim() === '') throw new AppError('missing_api_key');
  const match = BEARER.exec(authorization);
  if (match?.[1]) return match[1];
  throw new AppError(
    'missing_api_key',
    BEARER_SCHEME.test(authorization)
      ? 'The Authorization header holds no API key: send Authorization: Bearer <API_KEY>, one key with no spaces in it.'
      : 'The Authorization header is not a bearer key: send Authorization: Bearer <API_KEY>.',
  );
}
