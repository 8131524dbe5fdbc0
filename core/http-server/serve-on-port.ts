import type http from 'node:http';
import { serveHttp, type HttpService } from './serve-http.js';

/** The setting that chose the port: what a person changes when it cannot be opened. */
export type PortVariable = 'API_PORT' | 'MCP_PORT' | 'DASHBOARD_PORT' | 'BILLING_WORKER_PORT';

export interface ServeOnPortOptions {
  jsonErrors?: boolean;
  /** Who most likely holds a taken port, as a guess in the message ("another npm start"). */
  likelyHolder?: string;
}

/**
 * serveHttp, with the refusals a person can act on said in terms of the setting to change: a
 * port another process holds, one this user may not open, or a HOST this machine does not
 * have. `npm start` and the four service processes alike say them this way.
 */
export async function serveOnPort(variable: PortVariable, listener: http.RequestListener, port: number, host: string, options: ServeOnPortOptions = {}): Promise<HttpService> {
  try {
    return await serveHttp(listener, port, host, { jsonErrors: options.jsonErrors });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const guess = options.likelyHolder ? ` (${options.likelyHolder}?)` : '';
    if (code === 'EADDRINUSE') throw new Error(`${variable} ${port} is already in use on ${host}${guess}: stop what listens there, or set ${variable} to a free port`, { cause: err });
    if (code === 'EACCES') throw new Error(`${variable} ${port} may not be opened by this user on ${host}: set ${variable} to a port above 1023`, { cause: err });
    if (code === 'EADDRNOTAVAIL') throw new Error(`HOST ${host} is not an address of this machine: set HOST to one of its addresses, or 127.0.0.1`, { cause: err });
    // A HOST that is no address is looked up as a name: 999.1.1.1 or a typo said only
    // "getaddrinfo ENOTFOUND 999.1.1.1", without the setting it came from.
    if ((err as { syscall?: string }).syscall === 'getaddrinfo') {
      const why = code === 'ENOTFOUND' || code === 'EAI_NONAME' ? 'is neither an IP address nor a name that resolves here'
        : code === 'EAI_AGAIN' ? 'could not be looked up (the name server did not answer)'
        : `could not be looked up (${code ?? (err as Error).message})`;
      throw new Error(`HOST ${host} ${why}: set HOST to an address of this machine, or 127.0.0.1`, { cause: err });
    }
    throw err;
  }
}
