import type { Context } from 'koa';
import { signInEmail, type TrustedDevice } from '../core/dashboard-auth/index.js';
import { DEVICE_COOKIE, readCookie, setCookie } from './middleware/cookies.js';

// The device cookie (core/dashboard-auth/trusted-devices.ts): for each of the last few people
// who signed in with this browser, their e-mail and the secret that makes the browser trusted
// for it. One cookie holds several, so colleagues sharing a browser do not make it a stranger to
// each other by signing in. `base64url(e-mail).secret`, joined by `~`, newest first: three
// entries of at most ~385 characters (an e-mail of 254) stay far below the 4 KB a browser keeps
// for a cookie. HttpOnly, SameSite=Strict (only our own sign-in form needs it), Secure over
// https, for as long as the newest trust lasts (90 days).

const MAX_ENTRIES = 3;
const ENTRY = /^([A-Za-z0-9_-]{1,400})\.([A-Za-z0-9_-]{43})$/;

interface DeviceEntry {
  email: string;
  token: string;
}

function entries(ctx: Context): DeviceEntry[] {
  const value = readCookie(ctx, DEVICE_COOKIE);
  if (!value || value.length > 4096) return [];
  const found: DeviceEntry[] = [];
  for (const part of value.split('~').slice(0, MAX_ENTRIES)) {
    const m = ENTRY.exec(part);
    if (m) found.push({ email: Buffer.from(m[1]!, 'base64url').toString('utf8'), token: m[2]! });
  }
  return found;
}

/** The secret this browser holds for `email` (as typed), if it holds one. */
export function deviceTokenFor(ctx: Context, email: string): string | undefined {
  const wanted = signInEmail(email);
  return entries(ctx).find((e) => e.email === wanted)?.token;
}

/** After signing in as `email` (as sign-in normalised it): its new secret first, the others kept. */
export function rememberDevice(ctx: Context, email: string, device: TrustedDevice, secure: boolean): void {
  const value = [{ email, token: device.token }, ...entries(ctx).filter((e) => e.email !== email)]
    .slice(0, MAX_ENTRIES)
    .map((e) => `${Buffer.from(e.email, 'utf8').toString('base64url')}.${e.token}`)
    .join('~');
  setCookie(ctx, DEVICE_COOKIE, value, { secure, sameSite: 'Strict', maxAge: Math.floor((device.expiresAt.getTime() - Date.now()) / 1000) });
}
