import { AppError } from '../errors/index.js';

// RFC 9110: the scheme is case-insensitive and separated by one or more spaces. Anything else
// (Basic, a bare token, an empty Bearer) is "no API key" rather than "a wrong key".
const BEARER = /^bearer +(\S+) *$/i;

export function bearerToken(authorization: string | undefined): string {
  const match = authorization === undefined ? null : BEARER.exec(authorization);
  if (!match?.[1]) throw new AppError('missing_api_key');
  return match[1];
}
