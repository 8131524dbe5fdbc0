import type http from 'node:http';
import { serveHttp, type HttpService } from '../../../core/http-server/index.js';

type PortVariable = 'API_PORT' | 'MCP_PORT' | 'DASHBOARD_PORT';

/**
 * serveHttp, with the refusals a person can act on said in terms of the setting to change: a
 * port another process holds (often a second `npm start`), one this user may not open, or a
 * HOST this machine does not have.
 */
export async function serveOnPort(variable: PortVariable, listener: http.RequestListener, port: number, host: string, options: { jsonErrors?: boolean } = {}): Promise<HttpService> {
  try {
    return await serveHttp(listener, port, host, options);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new Error(`${variable} ${port} is already in use on ${host} (another npm start?): stop what listens there, or set ${variable} to a free port`, { cause: err });
    if (code === 'EACCES') throw new Error(`${variable} ${port} may not be opened by this user on ${host}: set ${variable} to a port above 1023`, { cause: err });
    if (code === 'EADDRNOTAVAIL') throw new Error(`HOST ${host} is not an address of this machine: set HOST to one of its addresses, or 127.0.0.1`, { cause: err });
    throw err;
  }
}
