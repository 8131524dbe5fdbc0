import type http from 'node:http';
import { AppError, toErrorObject } from '../core/errors/index.js';
import { livenessAnswer, serveOnPort, type HttpService } from '../core/http-server/index.js';
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
 * The billing worker's HTTP paths, GET /healthz (readiness) and GET /livez (liveness), on
 * BILLING_WORKER_PORT. No Koa for two routes: anything else is answered as the API answers it,
 * `unknown_endpoint` in the `{ error }` envelope (405 with `Allow` for another method on either), and requests Node's parser
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
    if (path !== '/healthz' && path !== '/livez') return sendError(res, new AppError('unknown_endpoint', 'No endpoint matches this path: the billing worker answers GET /healthz and GET /livez only.'));
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendError(res, new AppError('unknown_endpoint', 'This path only answers GET and HEAD.', { allow: ['GET', 'HEAD'] }));
    if (path === '/livez') {
      const answer = livenessAnswer();
      return send(res, answer.status, answer.body);
    }
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
