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

/** Prefixed identifiers: org_, key_, usr_, adj_ ... */
export const newId = (prefix: string, length = 20): string => `${prefix}_${randomBase62(length)}`;
