import type { Context } from 'koa';

export const SESSION_COOKIE = 'dash_session';
export const PRE_SESSION_CSRF_COOKIE = 'dash_csrf';
export const LANGUAGE_COOKIE = 'dash_lang';
/** Which people this browser has signed in as, and the secret that makes it trusted for each. */
export const DEVICE_COOKIE = 'dash_device';

export interface CookieOptions {
  secure: boolean;
  /** Seconds; 0 deletes the cookie; omitted: a session cookie. */
  maxAge?: number;
  /** Default Lax; Strict for a cookie only our own pages' requests need. */
  sameSite?: 'Lax' | 'Strict';
}

// Written by hand rather than through ctx.cookies: Koa refuses a Secure cookie on a request it
// believes is plain http, which is exactly the case behind a TLS-terminating proxy.
export function setCookie(ctx: Context, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, 'Path=/', 'HttpOnly', `SameSite=${options.sameSite ?? 'Lax'}`];
  if (options.secure) parts.push('Secure');
  if (options.maxAge !== undefined) parts.push(`Max-Age=${options.maxAge}`);
  const existing = ctx.response.get('Set-Cookie') as unknown as string[] | string | undefined;
  const list = Array.isArray(existing) ? existing : existing ? [existing] : [];
  ctx.set('Set-Cookie', [...list.filter((c) => !c.startsWith(`${name}=`)), parts.join('; ')]);
}

/** A session's cookie (sign-in, an accepted invitation, a password change), for as long as it lives. */
export function setSessionCookie(ctx: Context, session: { token: string; expiresAt: Date }, secure: boolean): void {
  setCookie(ctx, SESSION_COOKIE, session.token, { secure, maxAge: Math.floor((session.expiresAt.getTime() - Date.now()) / 1000) });
}

export function readCookie(ctx: Context, name: string): string | undefined {
  const header = ctx.get('Cookie');
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      try {
        return decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}
