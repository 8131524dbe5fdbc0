import http from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError, toErrorObject } from '../errors/index.js';
import { newRequestId } from '../ids/index.js';

// Requests Node's HTTP parser refuses never reach Koa, so neither the API's nor the tool
// server's error mapper sees them: Node itself answers 400 or 431 with an empty body. For a
// JSON service that is the one answer outside the `{ error }` envelope. This answers them as
// the catalogue's invalid_params (422), or unknown_endpoint (404) for a well-formed request
// with a method Node does not know (`FOO /companies/…`: no route answers it), with a request id, and closes the
// connection, as Node does (after a parse error the rest of the stream cannot be trusted).

/** Node's default limit on the request line and headers together (`--max-http-header-size`). */
const maxHeaderKb = Math.round(http.maxHeaderSize / 1024);

// A request line that is HTTP but for its method (`FOO /path HTTP/1.1`); `HELLO` alone is not.
const WELL_FORMED_REQUEST_LINE = /^[A-Za-z]+ \S+ HTTP\/\d\.\d\r?\n/;

function refusalOf(err: NodeJS.ErrnoException & { rawPacket?: Buffer }): AppError {
  if (err.code === 'HPE_INVALID_METHOD' && WELL_FORMED_REQUEST_LINE.test(err.rawPacket?.toString('latin1') ?? '')) {
    return new AppError('unknown_endpoint', 'The request method is not one this service answers.');
  }
  const { message, detail } = refusalFor(err.code);
  // invalid_params names each failure in `details` (decisions.md), here the part of the request.
  return new AppError('invalid_params', message, { details: [detail] });
}

function refusalFor(code: string | undefined): { message: string; detail: { path: string; message: string } } {
  if (code === 'HPE_HEADER_OVERFLOW') {
    return { message: `The request line and headers are too large: at most ${maxHeaderKb} KB.`, detail: { path: 'headers', message: `the request line and headers together at most ${maxHeaderKb} KB` } };
  }
  if (code === 'HPE_INVALID_METHOD') return { message: 'The request method is not valid HTTP.', detail: { path: 'method', message: 'not a valid HTTP method' } };
  if (code === 'HPE_INVALID_URL') return { message: 'The request target is not a valid URL path.', detail: { path: 'path', message: 'not a valid URL path' } };
  return { message: 'The request is not valid HTTP/1.1.', detail: { path: 'request', message: 'not valid HTTP/1.1' } };
}

/** The headers and body of one refused request's answer. */
function refusalAnswer(error: AppError): { headers: Record<string, string>; body: string } {
  const requestId = newRequestId();
  const body = JSON.stringify({ error: toErrorObject(error, requestId).error });
  return {
    headers: { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': String(Buffer.byteLength(body)), 'X-Request-Id': requestId, Connection: 'close' },
    body,
  };
}

/** The bytes written for one refused request. */
function malformedRequestResponse(error: AppError): string {
  const { headers, body } = refusalAnswer(error);
  return [`HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}`, ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`), '', body].join('\r\n');
}

type RequestListener = (req: http.IncomingMessage, res: http.ServerResponse) => void;

/**
 * An HTTP/1.1 request must name its host (RFC 9112 §3.2). Node's own check (`requireHostHeader`,
 * turned off where this runs) answers a bare 400 with an empty body; this answers
 * invalid_params in the envelope, naming the header, and closes the connection, as for the
 * requests the parser refuses. HTTP/1.0 had no Host header: such a request is served. Two
 * Host headers are refused too (hostRefusal).
 */
export function requireHost(listener: RequestListener): RequestListener {
  return (req, res) => {
    const refusal = hostRefusal(req);
    if (refusal === null) {
      listener(req, res);
      return;
    }
    const { headers, body } = refusalAnswer(refusal);
    res.writeHead(422, headers);
    res.end(body);
  };
}

// Two Host headers are refused as none is (RFC 9112 §3.2 says 400 for either): Node keeps the
// first and drops the other, and a proxy in front may have routed by the other.
function hostRefusal(req: http.IncomingMessage): AppError | null {
  const hosts = req.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase() === 'host').length;
  if (hosts > 1) {
    return new AppError('invalid_params', `The request has ${hosts} Host headers; HTTP/1.1 allows one.`, { details: [{ path: 'headers.host', message: 'given more than once' }] });
  }
  if (hosts === 1 || req.httpVersionMajor !== 1 || req.httpVersionMinor === 0) return null;
  return new AppError('invalid_params', 'The request has no Host header, which HTTP/1.1 requires.', { details: [{ path: 'headers.host', message: 'required in HTTP/1.1' }] });
}

/**
 * A request that did not arrive in full in time (a client trickling it, or one that stopped
 * half way). Node's own answer is a bare 408 with no body; every error of ours is in the
 * envelope (decisions.md), whose catalogue has no timeout of the client's: the request as
 * received is incomplete, so invalid_params, as for the parser's refusals.
 */
function lateRequestRefusal(timeouts: { headersTimeoutMs: number; requestTimeoutMs: number }): AppError {
  const [headers, whole] = [timeouts.headersTimeoutMs / 1000, timeouts.requestTimeoutMs / 1000];
  return new AppError('invalid_params', `The request did not arrive in full in time: its request line and headers within ${headers} s, all of it within ${whole} s.`, {
    details: [{ path: 'request', message: `not received in full within ${headers} s (headers) or ${whole} s (all of it)` }],
  });
}

/**
 * An `Expect` other than 100-continue (which Node answers itself) is an expectation the service
 * cannot meet: Node answers a bare 417; this answers invalid_params in the envelope, naming the
 * header, and closes the connection.
 */
function refuseExpectation(req: http.IncomingMessage, res: http.ServerResponse): void {
  const { headers, body } = refusalAnswer(
    new AppError('invalid_params', 'The Expect header asks for something this service does not do: only 100-continue is supported.', {
      details: [{ path: 'headers.expect', message: 'only 100-continue is supported' }],
    }),
  );
  res.writeHead(422, headers);
  res.end(body);
  req.resume();
}

export function answerMalformedRequests(server: http.Server, timeouts: { headersTimeoutMs: number; requestTimeoutMs: number }): void {
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex & { bytesWritten?: number }) => {
    // Only a socket on which nothing was answered yet can take an answer.
    if (socket.writable && !socket.bytesWritten) {
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') socket.write(malformedRequestResponse(lateRequestRefusal(timeouts)));
      else if (err.code?.startsWith('HPE_')) socket.write(malformedRequestResponse(refusalOf(err)));
    }
    socket.destroy();
  });
  server.on('checkExpectation', refuseExpectation);
  // CONNECT asks for a tunnel, which Node hands to this event, not to the request listener: with
  // no listener Node drops the connection unanswered. No route answers it (its target is a host,
  // not a path): unknown_endpoint, as for a method no route has.
  server.on('connect', (_req: http.IncomingMessage, socket: Duplex) => {
    socket.end(malformedRequestResponse(new AppError('unknown_endpoint', 'This service is no proxy: it does not answer CONNECT.')));
  });
}
