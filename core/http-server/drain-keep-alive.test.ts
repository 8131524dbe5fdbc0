import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { serveHttp } from './serve-http.js';

// A service stopping (SIGTERM) while a client keeps a connection alive: the client's next call is
// still answered, with `Connection: close`, and the connection ends with it, so the drain ends
// once the calls in flight are answered instead of serving that client for the whole grace and
// then cutting the connection under a call (already charged, on the API).

/** One GET on the agent's one connection: its status, its Connection header and its socket. */
function get(port: number, agent: http.Agent, path = '/'): Promise<{ status: number; connection: string | undefined; socket: import('node:net').Socket }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, socket: req.socket! }));
    });
    req.on('error', reject);
  });
}

describe('a service stopping while a client keeps its connection alive', () => {
  it('then the client\'s next call is answered with Connection: close, its connection ends, and the stop does not wait out the grace', async () => {
    let received: () => void = () => {};
    const slowArrived = new Promise<void>((resolve) => (received = resolve));
    // '/slow' is answered 300 ms after it arrives: a call in flight when the stop begins.
    const service = await serveHttp((req, res) => {
      if (req.url !== '/slow') return void res.end('served');
      received();
      setTimeout(() => res.end('served late'), 300);
    }, 0, '127.0.0.1', { jsonErrors: true });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = await get(service.port, agent);
      expect(before).toMatchObject({ status: 200, connection: 'keep-alive' });
      // A call in flight when the stop begins keeps the connection busy: server.close() leaves it open.
      const inFlight = get(service.port, agent, '/slow');
      await slowArrived;
      const stopped = service.close(20_000).then(() => Date.now());
      const began = Date.now();
      expect(await inFlight).toMatchObject({ status: 200 });
      const next = await get(service.port, agent);
      expect(next).toMatchObject({ status: 200, connection: 'close' });
      expect(next.socket.destroyed || (await new Promise((resolve) => next.socket.once('close', () => resolve(true))))).toBe(true);
      // Well inside the 20 s grace: the stop ended with the last answer, not at the grace.
      expect((await stopped) - began).toBeLessThan(5_000);
    } finally {
      agent.destroy();
      await service.close(0);
    }
  });
});
