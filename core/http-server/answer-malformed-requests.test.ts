import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorEnvelopeSchema } from '../errors/index.js';
import { serveHttp, type HttpService } from './serve-http.js';

// Requests Node's HTTP parser refuses, sent as raw bytes to a real server started the way the
// API and the tool server start theirs (serveHttp with jsonErrors).
let service: HttpService;
beforeAll(async () => {
  service = await serveHttp((_req, res) => res.end('ok'), 0, '127.0.0.1', { jsonErrors: true });
});
afterAll(() => service.close(0));

function send(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(service.port, '127.0.0.1', () => socket.end(bytes));
    let answer = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

function parse(answer: string) {
  const [head, body] = answer.split('\r\n\r\n') as [string, string];
  const [statusLine, ...headerLines] = head.split('\r\n');
  const headers = Object.fromEntries(headerLines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
  return { statusLine, headers, body: JSON.parse(body) as unknown };
}

describe('requests the HTTP parser refuses', () => {
  it('when the headers are larger than Node accepts, then the answer is invalid_params in the envelope, with a request id', async () => {
    const { statusLine, headers, body } = parse(await send(`GET /companies/x/report HTTP/1.1\r\nHost: a\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`));
    expect(statusLine).toBe('HTTP/1.1 422 Unprocessable Entity');
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(headers.connection).toBe('close');
    const envelope = errorEnvelopeSchema.parse(body);
    expect(envelope.error).toMatchObject({ code: 'invalid_params', message: 'The request line and headers are too large: at most 16 KB.' });
    // invalid_params always names what failed (decisions.md: one details entry per failure).
    expect(envelope.error.details).toEqual([{ path: 'headers', message: 'the request line and headers together at most 16 KB' }]);
    expect(headers['x-request-id']).toBe(envelope.error.requestId);
  });

  it('when an HTTP/1.1 request has no Host header, then the answer is invalid_params in the envelope naming it, and the connection closes; HTTP/1.0 needs none', async () => {
    const { statusLine, headers, body } = parse(await send('GET /companies/43102060159/financials HTTP/1.1\r\n\r\n'));
    expect(statusLine).toBe('HTTP/1.1 422 Unprocessable Entity');
    expect(headers['content-type']).toBe('application/json; charset=utf-8');
    expect(headers.connection).toBe('close');
    const envelope = errorEnvelopeSchema.parse(body);
    expect(envelope.error).toMatchObject({ code: 'invalid_params', message: 'The request has no Host header, which HTTP/1.1 requires.' });
    expect(envelope.error.details).toEqual([{ path: 'headers.host', message: 'required in HTTP/1.1' }]);
    expect(headers['x-request-id']).toBe(envelope.error.requestId);
    expect(await send('GET / HTTP/1.0\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
    expect(await send('GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')).toMatch(/\r\n\r\nok$/);
  });

  it('when a request has two Host headers, then the answer is invalid_params naming the header, not the first host served', async () => {
    const { statusLine, headers, body } = parse(await send('GET /companies/43102060159/financials HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n'));
    expect(statusLine).toBe('HTTP/1.1 422 Unprocessable Entity');
    expect(headers.connection).toBe('close');
    const envelope = errorEnvelopeSchema.parse(body);
    expect(envelope.error).toMatchObject({ code: 'invalid_params', message: 'The request has 2 Host headers; HTTP/1.1 allows one.' });
    expect(envelope.error.details).toEqual([{ path: 'headers.host', message: 'given more than once' }]);
    expect(headers['x-request-id']).toBe(envelope.error.requestId);
  });

  it('when the method is CONNECT (a tunnel, which Node does not hand to the application), then the answer is unknown_endpoint in the envelope, not a dropped connection', async () => {
    const { statusLine, headers, body } = parse(await send('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'));
    expect(statusLine).toBe('HTTP/1.1 404 Not Found');
    expect(headers.connection).toBe('close');
    const envelope = errorEnvelopeSchema.parse(body);
    expect(envelope.error).toMatchObject({ code: 'unknown_endpoint', message: 'This service is no proxy: it does not answer CONNECT.' });
    expect(headers['x-request-id']).toBe(envelope.error.requestId);
  });

  it('when the request line is not HTTP, then the answer says so in the envelope', async () => {
    for (const garbage of ['HELLO\r\n\r\n', 'GET /a b c HTTP/1.1\r\n\r\n', 'G@T / HTTP/1.1\r\nHost: a\r\n\r\n']) {
      const { statusLine, body } = parse(await send(garbage));
      expect(statusLine).toBe('HTTP/1.1 422 Unprocessable Entity');
      const { error } = errorEnvelopeSchema.parse(body);
      expect(error.code).toBe('invalid_params');
      expect(error.details, garbage).toHaveLength(1);
    }
  });

  it('when the method is one HTTP does not know, then the answer is unknown_endpoint (404): no route answers it', async () => {
    for (const method of ['FOO', 'BREW']) {
      const { statusLine, headers, body } = parse(await send(`${method} /companies/43102060159/financials HTTP/1.1\r\nHost: a\r\n\r\n`));
      expect(statusLine).toBe('HTTP/1.1 404 Not Found');
      const envelope = errorEnvelopeSchema.parse(body);
      expect(envelope.error).toMatchObject({ code: 'unknown_endpoint', message: 'The request method is not one this service answers.' });
      expect(headers['x-request-id']).toBe(envelope.error.requestId);
    }
  });

  it('when a request is well-formed, then the application answers it as usual', async () => {
    expect(await send('GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\nok$/);
  });
});
