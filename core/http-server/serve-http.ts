import http from 'node:http';
import type { Logger } from '../logging/index.js';
import { answerMalformedRequests, requireHost } from './answer-malformed-requests.js';
import { markStopping } from './liveness.js';

type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface HttpService {
  server: http.Server;
  /** The port actually bound (useful with port 0). */
  port: number;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then resolves. */
  close(graceMs?: number): Promise<void>;
}

export interface ServeHttpOptions {
  jsonErrors?: boolean;
  /** How long a client may take to send a whole request, body included (default REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
}

// A request is a few KB (a GET, a tool call, a 64 KB form at most): a client still sending one
// after this long is trickling it to hold the connection (Node's own default is 300 s, checked
// every 30 s, so a few thousand such sockets could hold the dashboard's, which reads its form
// bodies before any session or CSRF check). Answered, then closed: 422 invalid_params in the
// envelope where the service's errors are JSON, Node's 408 on the dashboard.
export const REQUEST_TIMEOUT_MS = 30_000;

// Node's http server, not Koa: each process hands in its app's callback. Keep-alive is longer
// than common load balancers' idle timeouts, so they close idle connections first and never
// send a request on a socket we are closing. `jsonErrors`: requests Node's parser refuses,
// HTTP/1.1 requests without a Host header, requests that do not arrive in full in time and
// an `Expect` other than 100-continue are answered in the `{ error }` envelope (the API and the
// tool server), not with Node's bare 400, 408 or 417.
export function serveHttp(listener: RequestListener, port: number, host: string, options: ServeHttpOptions = {}): Promise<HttpService> {
  const requestTimeout = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
  // Node refuses a headers timeout longer than the request's; its 60 s default is longer than ours.
  const headersTimeout = Math.min(requestTimeout, 20_000);
  const server = http.createServer({
    // Checked by requireHost instead, which answers in the envelope.
    requireHostHeader: !options.jsonErrors,
    requestTimeout,
    headersTimeout,
    // How often Node looks for connections past those timeouts (default 30 s: up to twice the limit).
    connectionsCheckingInterval: Math.min(2_000, requestTimeout),
  }, options.jsonErrors ? requireHost(listener) : listener);
  server.keepAliveTimeout = 65_000;
  // Once stopping, every answer says `Connection: close` and Node closes its connection after it.
  // server.close() only stops new connections: a client keeping one alive went on being served
  // for the whole grace, then had it cut under a call already charged (an operator's review saw
  // 1,065 calls served after SIGTERM and the last one's answer lost). Now each connection ends
  // after its next answer, and the drain once the calls in flight are answered.
  let draining = false;
  server.prependListener('request', (_req, res) => {
    if (draining) res.setHeader('Connection', 'close');
  });
  if (options.jsonErrors) answerMalformedRequests(server, { headersTimeoutMs: headersTimeout, requestTimeoutMs: requestTimeout });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve({
        server,
        port: typeof address === 'object' && address ? address.port : port,
        close: (graceMs = 10_000) =>
          new Promise<void>((done) => {
            draining = true;
            server.close(() => done());
            server.closeIdleConnections();
            setTimeout(() => server.closeAllConnections(), graceMs).unref();
          }),
      });
    });
  });
}

/**
 * On SIGINT/SIGTERM: run `stop` once (drain servers, flush usage, close pools), then re-raise
 * the signal so the process ends the way its supervisor expects (143 for SIGTERM). The last
 * line says how it ended: "stopped" with the drain's duration once `stop` finished, so a
 * drained stop can be told from one killed half way (whose last line is "shutting down"), or
 * "unclean shutdown" when `stop` failed, and then the process exits with status 1 instead: a
 * re-raised signal would tell the supervisor it stopped as asked.
 */
export function stopOnSignal(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    markStopping();
    logger.info('shutting down', { signal });
    const began = Date.now();
    try {
      await stop();
      // Written before the re-raise ends the process: on Linux, stderr writes are synchronous.
      logger.info('stopped', { signal, drainMs: Date.now() - began });
    } catch (err) {
      logger.error('unclean shutdown', { err });
      process.exit(1);
    }
    process.kill(process.pid, signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, (s) => void handle(s));
}
