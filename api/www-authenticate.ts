import type { ErrorCode } from '../core/errors/index.js';

// What every 401 answers in WWW-Authenticate (RFC 9110 §11.6.1, RFC 6750 §3): the scheme, and
// for a key that was sent and refused, why. One list, which the OpenAPI document declares.
export const wwwAuthenticateValues = ['Bearer realm="api"', 'Bearer realm="api", error="invalid_token"'] as const;

export const wwwAuthenticateFor = (code: ErrorCode): (typeof wwwAuthenticateValues)[number] =>
  code === 'invalid_api_key' ? wwwAuthenticateValues[1] : wwwAuthenticateValues[0];
