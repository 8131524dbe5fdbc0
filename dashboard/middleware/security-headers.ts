import type { Middleware } from 'koa';

// Everything is served from here (no CDN), so the policy can be strict: no inline script or
// style, no framing, forms post only to us. no-store keeps keys and balances out of caches;
// same-origin referrers keep invitation tokens in URLs from leaking to other sites.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'; object-src 'none'";

export function securityHeaders(): Middleware {
  return async (ctx, next) => {
    await next();
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('X-Frame-Options', 'DENY');
    ctx.set('Referrer-Policy', 'same-origin');
    if (!ctx.path.startsWith('/assets/')) ctx.set('Cache-Control', 'no-store');
  };
}
