// The headers of the pages the API serves to people (/docs, /docs/getting-started) and of their
// assets. The API's JSON answers carry none of these: no browser renders them as a page.
//
// Every page gets a Content-Security-Policy that names what it may load: its own scripts and
// styles from /docs/assets (files, not inline, so no 'unsafe-inline'), nothing from elsewhere,
// no frames, forms or <base>. A script smuggled into the page (through the OpenAPI texts or the
// guide's Markdown, both ours and escaped) has nowhere to run from: this is the second lock.
// frame-ancestors 'none' and X-Frame-Options (for browsers without CSP level 2) refuse framing:
// the reference's "Try it out" takes a key, which a framing page must not be able to click for.

const policy = (directives: Record<string, string>) =>
  Object.entries(directives)
    .map(([name, value]) => `${name} ${value}`)
    .join('; ');

const common = { 'base-uri': "'none'", 'form-action': "'none'", 'frame-ancestors': "'none'" };

/** nosniff on everything the docs serve (assets included): a file is read as its Content-Type says. */
export const assetSecurityHeaders = { 'X-Content-Type-Options': 'nosniff' } as const;

function pageHeaders(directives: Record<string, string>) {
  return {
    'Content-Security-Policy': policy({ ...directives, ...common }),
    ...assetSecurityHeaders,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
  } as const;
}

/** The guide: no script at all; its stylesheet and icon from here. */
export const guidePageHeaders = pageHeaders({ 'default-src': "'none'", 'style-src': "'self'", 'img-src': "'self'" });

/**
 * The reference (Swagger UI): its bundle and our docs.js; images from here and the data: URLs
 * Swagger UI draws its icons with; requests to this server (the catalogue document) and, for
 * "Try it out", to the address the document's `servers` names (PUBLIC_BASE_URL), which behind a
 * gateway or under another host name is not this page's origin.
 */
export function referencePageHeaders(serverUrl: string) {
  let api = "'self'";
  try {
    api += ` ${new URL(serverUrl).origin}`;
  } catch {
    // Not a URL (config refuses one): the page's own origin only.
  }
  return pageHeaders({ 'default-src': "'none'", 'script-src': "'self'", 'style-src': "'self'", 'img-src': "'self' data:", 'connect-src': api });
}
