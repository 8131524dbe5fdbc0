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
   * made meanwhile are accepted and get nothing. Until close().
   */
  freeze(): void;
  close(): Promise<void>;
}

/**
 * A TCP relay in front of a server (Postgres, Redis) that a test can cut, to see how a process
 * behaves when the server becomes unreachable, without stopping the server other tests use.
 */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let open = true;
  let frozen = false;
  // allowHalfOpen: a frozen relay must not answer a client's FIN with its own.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    if (!open) return client.destroy();
    const track = (s: net.Socket) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {});
    };
    track(client);
    if (frozen) return void client.pause();
    const upstream = net.connect({ port: target.port, host: target.host, allowHalfOpen: true });
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => {
      if (!frozen) upstream.destroy();
    });
    upstream.on('close', () => {
      if (!frozen) client.destroy();
    });
  });
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
    },
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
