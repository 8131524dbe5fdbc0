import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { REQUEST_TIMEOUT_MS, serveHttp, type HttpService } from './serve-http.js';

// A client that trickles its request body (a byte every few seconds) to hold a connection is
// answered 408 and cut off once its request has taken longer than the request timeout, rather
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

describe('a request that takes too long to arrive', () => {
  it('when a client trickles its body past the request timeout then it gets 408 and the connection ends, within about the timeout', async () => {
    const service = await serveHttp(readsBody, 0, '127.0.0.1', { jsonErrors: true, requestTimeoutMs: 1_000 });
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
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('when a service starts then its request timeout is REQUEST_TIMEOUT_MS, not Node\'s 300 s', async () => {
    const service = await serveHttp(readsBody, 0, '127.0.0.1');
    services.push(service);
    expect(REQUEST_TIMEOUT_MS).toBe(30_000);
    expect(service.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
    expect(service.server.headersTimeout).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS);
  });
});
