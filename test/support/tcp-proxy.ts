import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** `url` with its host:port pointing at the proxy. */
  urlFor(url: string): string;
  /** Drops every connection and refuses new ones: the server "went away". */
  cut(): void;
  restore(): void;
  /**
   * Stops forwarding, both ways, on every connection, and closes none: half-open connections,
   * as when the server's host froze or a network path drops packets without a RST. Nothing the
   * server or the client does afterwards (answer, close) reaches the other side; connections
   * made meanwhile are accepted and get nothing. Until close() (or thaw(), for new ones).
   */
  freeze(): void;
  /**
   * After freeze(): connections made from now on are forwarded again; those frozen stay frozen,
   * as when a standby took over the address and the old server's sockets lead nowhere.
   */
  thaw(): void;
  /**
   * Holds every byte, both ways, on every connection, closing none, and holds new connections
   * unanswered; resume() delivers what was held and carries on: the server's host stopped for a
   * while (SIGSTOP on a proxy in front of it, a VM paused), then running again.
   */
  pause(): void;
  resume(): void;
  /** How many client connections are open: frozen ones until their client closes its end. */
  openConnections(): number;
  close(): Promise<void>;
}

/**
 * A TCP relay in front of a server (Postgres, Redis) that a test can cut, to see how a process
 * behaves when the server becomes unreachable, without stopping the server other tests use.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  const clients = new Set<net.Socket>();
  // Those frozen stay so through a thaw.
  const stuck = new WeakSet<net.Socket>();
  let open = true;
  let frozen = false;
  let paused = false;
  // Each client with its upstream, to stop and restart their pipes; and clients held by a pause.
  const pairs = new Map<net.Socket, net.Socket>();
  const held: (() => void)[] = [];
  // What a client sends to a frozen connection is read and goes nowhere, as into the buffers of
  // a server that never reads them: so the relay still sees the client close its end.
  const stop = (client: net.Socket) => {
    stuck.add(client);
    client.unpipe();
    client.on('data', () => {});
    client.resume();
  };
  // allowHalfOpen: a frozen relay must not answer a client's FIN with its own.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    if (!open) return client.destroy();
    const track = (s: net.Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    };
    track(client);
    clients.add(client);
    client.on('close', () => clients.delete(client));
    client.on('end', () => clients.delete(client));
    if (frozen) return stop(client);
    if (paused) {
      client.pause();
      held.push(() => !client.destroyed && relay(client));
      return;
    }
    relay(client);
  });
  const relay = (client: net.Socket) => {
    const upstream = net.connect({ port: target.port, host: target.host, allowHalfOpen: true });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => {});
    pairs.set(client, upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => {
      pairs.delete(client);
      if (!stuck.has(client)) upstream.destroy();
    });
    upstream.on('close', () => {
      if (!stuck.has(client)) client.destroy();
    });
  };
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    urlFor(url) {
      const u = new URL(url);
      u.host = `127.0.0.1:${port}`;
      return u.toString();
    },
    cut() {
      open = false;
      for (const s of sockets) s.destroy();
    },
    restore() {
      open = true;
    },
    freeze() {
      frozen = true;
      for (const s of sockets) {
        s.unpipe();
        s.pause();
      }
      for (const c of clients) stop(c);
    },
    thaw() {
      frozen = false;
    },
    pause() {
      paused = true;
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
    },
    resume() {
      paused = false;
      for (const [client, upstream] of pairs) {
        client.pipe(upstream);
        upstream.pipe(client);
      }
      for (const start of held.splice(0)) start();
    },
    openConnections: () => clients.size,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

export function hostAndPort(url: string): { host: string; port: number } {
  const u = new URL(url);
  return { host: u.hostname, port: Number(u.port || 5432) };
}
