import type http from 'node:http';
import { AppError, toErrorObject } from '../core/errors/index.js';
import { serveOnPort, type HttpService } from '../core/http-server/index.js';
import { newRequestId } from '../core/ids/index.js';
import type { Logger } from '../core/logging/index.js';
import type { WorkerHealthAnswer } from './worker-health.js';

export interface HealthServerOptions {
  port: number;
  host: string;
  check(): Promise<WorkerHealthAnswer>;
  logger: Logger;
}

/**
 * The billing worker's one HTTP path, GET /healthz, on BILLING_WORKER_PORT. No Koa for one
 * route: anything else is answered as the API answers it, `unknown_endpoint` in the `{ error }`
 * envelope (405 with `Allow` for another method on /healthz), and requests Node's parser
 * refuses are answered in the envelope too (jsonErrors). Probes are not logged: one every few
 * seconds would bury the worker's own lines.
 */
export function serveWorkerHealth(options: HealthServerOptions): Promise<HttpService> {
  // serveOnPort words a taken port in terms of the variable to change.
  return serveOnPort('BILLING_WORKER_PORT', healthListener(options), options.port, options.host, { jsonErrors: true });
}

function healthListener(options: HealthServerOptions): http.RequestListener {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz') return sendError(res, new AppError('unknown_endpoint', 'No endpoint matches this path: the billing worker answers GET /healthz only.'));
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, new AppError('unknown_endpoint', 'This path only answers GET.', { allow: ['GET', 'HEAD'] }));
    options.check().then(
      (answer) => send(res, answer.status, answer.body),
      (err: unknown) => {
        options.logger.error('health check failed', { err });
        sendError(res, new AppError('internal_error'));
      },
    );
  };
}

function sendError(res: http.ServerResponse, error: AppError): void {
  const requestId = newRequestId();
  res.setHeader('X-Request-Id', requestId);
  for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
  send(res, error.status, { error: toErrorObject(error, requestId).error });
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(res.req.method === 'HEAD' ? undefined : text);
}
