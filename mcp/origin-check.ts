// Which browser origins may call the tool server. The Streamable HTTP transport requires servers
// to validate Origin (DNS rebinding: a page of evil.example whose name is made to resolve to
// 127.0.0.1 would otherwise reach a server on the user's machine as its own origin). A request
// without Origin is not from a browser page (SDK clients, curl) and is not judged here.

/** Whether a request carrying this Origin header may be served. */
export type OriginCheck = (origin: string) => boolean;

// Pages on the user's own machine (the MCP Inspector at http://localhost:6274, a local
// dashboard): no rebinding makes a remote page's origin one of these. Any port, and none.
const LOOPBACK_ORIGIN = /^http:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/;

export interface OriginCheckOptions {
  /** MCP_ALLOWED_ORIGINS: exact origins as URL.origin writes them (core/config), or '*' for any. */
  allowed?: '*' | readonly string[];
  /** PUBLIC_MCP_URL: the server's own origin is always allowed. */
  publicUrl?: string;
}

export function originCheck(options: OriginCheckOptions = {}): OriginCheck {
  if (options.allowed === '*') return () => true;
  const exact = new Set(options.allowed ?? []);
  if (options.publicUrl) exact.add(new URL(options.publicUrl).origin);
  // Compared as sent: browsers write an origin lower-case and without its default port, the form
  // the set holds; a header written otherwise is not a browser's, and is refused.
  return (origin) => exact.has(origin) || LOOPBACK_ORIGIN.test(origin);
}
