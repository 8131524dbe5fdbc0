import net from 'node:net';

/**
 * The address a client on this machine opens to reach a server of this host listening on
 * `host`:`port` (HOST and a port: the fallback of PUBLIC_BASE_URL and PUBLIC_MCP_URL). A server
 * listening everywhere (0.0.0.0 or ::, as in a container) is not reached at that address, which
 * names every interface and none to connect to: it is reached at 127.0.0.1. An IPv6 address
 * goes in brackets, as a URL needs (`http://:::3001` is not one).
 */
export function localUrl(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (bare === '0.0.0.0' || bare === '::') return `http://127.0.0.1:${port}`;
  return `http://${net.isIPv6(bare) ? `[${bare}]` : bare}:${port}`;
}
