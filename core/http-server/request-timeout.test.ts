import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUEST_TIMEOUT_MS, serveHttp, type HttpService } from './serve-http.js';

// A client that trickles its request body (a byte every few seconds) to hold a connection is
// answered (in the envelope where errors are JSON, Node's 408 otherwise) and cut off once its request has taken longer than the request timeout, rather
// than after Node's 300 s. Started as the services start theirs, with a short timeout here.
const services: HttpService[] = [];
afterEach(async () => {
  for (const s of services.splice(0)) await s.close(0);
});

/** Reads a body as the dashboard's form reader does, then answers. */
const readsBody = (req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse) => {
  req.resume();
  req.on('end', () => res.end('read'));
};

describe('a request with an Expect other than 100-continue', () => {
  it('then the JSON service answers invalid_params in the envelope, naming the header, not a bare 417; 100-continue is still served', async () => {
    const service = await serveHttp((req, res) => res.end('served'), 0, '127.0.0.1', { jsonErrors: true });
    services.push(service);
    const refused = await fetchRaw(service.port, 'GET /companies/43102060159/report HTTP/1.1\r\nHost: x\r\nExpect: bogus\r\n\r\n');
    expect(refused).toMatch(/^HTTP\/1\.1 422 Unprocessable Entity\r\n/);
    expect(refused).toMatch(/\r\nX-Request-Id: req_[0-9a-f-]{36}\r\n/);
    expect(JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4))).toMatchObject({
      error: { code: 'invalid_params', details: [{ path: 'headers.expect', message: 'only 100-continue is supported' }] },
    });
    const continued = await fetchRaw(service.port, 'POST /x HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
    expect(continued).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n[^]*served$/);
  });
});

/** The raw bytes the server answers to `request`, until it closes the connection (or 5 s). */
function fetchRaw(port: number, request: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {});
    socket.on('close', () => resolve(text));
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
}

describe('a request that takes too long to arrive', () => {
  it.each([
    { jsonErrors: true, label: '422 invalid_params in the envelope', answer: /^HTTP\/1\.1 422 [^]*\r\nX-Request-Id: req_[0-9a-f-]{36}\r\n[^]*\r\n\r\n\{"error":\{"code":"invalid_params","message":"The request did not arrive in full in time: its request line and headers within 1 s, all of it within 1 s\.","requestId":"req_[0-9a-f-]{36}","details":\[\{"path":"request","message":"not received in full within 1 s \(headers\) or 1 s \(all of it\)"\}\]\}\}$/ },
    { jsonErrors: false, label: "Node's 408", answer: /^HTTP\/1\.1 408 / },
  ])('when a client trickles its body past the request timeout (JSON errors: $jsonErrors) then it is answered $label and the connection ends, within about the timeout', async ({ jsonErrors, answer: expected }) => {
    const service = await serveHttp(readsBody, 0, '127.0.0.1', { jsonErrors, requestTimeoutMs: 1_000 });
    services.push(service);
    const began = Date.now();
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = net.connect(service.port, '127.0.0.1', () => {
        socket.write('POST /sign-in HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\nemail=');
      });
      // A byte every 300 ms: never idle long enough for a socket timeout, never done.
      const trickle = setInterval(() => socket.write('x'), 300);
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('error', () => {});
      socket.on('close', () => {
        clearInterval(trickle);
        resolve(text);
      });
      setTimeout(() => {
        clearInterval(trickle);
        socket.destroy();
        reject(new Error(`still open after 10 s: ${text}`));
      }, 10_000).unref();
    });
    expect(answer).toMatch(expected);
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('when a client stops sending its headers then the JSON service answers in the envelope after the headers timeout', async () => {
    const service = await serveHttp(readsBody, 0, '127.0.0.1', { jsonErrors: true, requestTimeoutMs: 1_000 });
    services.push(service);
    const answer = await new Promise<string>((resolve) => {
      const socket = net.connect(service.port, '127.0.0.1', () => socket.write('GET /companies/43102060159/report HTTP/1.1\r\nHost: x\r\n'));
      let text = '';
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (text += chunk));
      socket.on('error', () => {});
      socket.on('close', () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 422 Unprocessable Entity\r\n/);
    expect(answer).toContain('"code":"invalid_params"');
  });

  it('when a service starts then its request timeout is REQUEST_TIMEOUT_MS, not Node\'s 300 s', async () => {
    const service = await serveHttp(readsBody, 0, '127.0.0.1');
    services.push(service);
    expect(REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(service.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(service.server.headersTimeout).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS);
  });
});
