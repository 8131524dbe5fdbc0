import { createHash, randomBytes } from 'node:crypto';

/** 32 random bytes, base64url: session cookies, CSRF tokens, invitation links. */
export function newSecretToken(): string {
  return randomBytes(32).toString('base64url');
}

/** What we store instead of the token itself: a leaked table grants nothing. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}
