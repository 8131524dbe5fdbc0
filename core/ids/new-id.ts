import { randomBytes, randomUUID } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Uniformly random base62 (rejection sampling: no modulo bias, since keys are secrets). */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248) out += BASE62[byte % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export const newRequestId = (): string => `req_${randomUUID()}`;

// req_ and 32 lower-case hex digits as a UUID: nginx's $request_id (random, so no UUID
// version digit) in the shape deploy/nginx.conf gives it, and ours.
const REQUEST_ID_SHAPE = /^req_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The call's request id: the gateway's, from its X-Request-Id header, when this process trusts
 * the gateway (TRUST_GATEWAY_REQUEST_ID) and the header is exactly one id of that shape; else a
 * fresh one. Never the client's: the gateway replaces whatever header the client sent.
 */
export function requestIdOf(header: string | string[] | undefined, trustGateway: boolean): string {
  if (trustGateway && typeof header === 'string' && REQUEST_ID_SHAPE.test(header)) return header;
  return newRequestId();
}

/** Prefixed identifiers: org_, key_, usr_, adj_ ... */
export const newId = (prefix: string, length = 20): string => `${prefix}_${randomBase62(length)}`;
