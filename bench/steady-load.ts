import net from 'node:net';

// Open-loop load at a steady rate, for latency at a given fraction of peak: requests come due
// evenly spaced in time whatever the server does, and each one's latency is counted from the
// moment it was due, not from when it left, so a stall is charged to every request that queued
// behind it (no coordinated omission).
//
// autocannon's `overallRate` does not do this: each connection sends its per-second budget back
// to back at the start of every second, then waits for the next one (reqsMadeThisSecond in
// autocannon/lib/httpClient.js). "Half of peak" there is full load for about half of each
// second, so its p99 is that of a saturated server.
//
// Plain keep-alive sockets and a minimal response reader rather than node:http's client, which
// cost about twice autocannon's CPU per request here: CPU this machine's two cores share with
// the server under test. The servers measured answer with Content-Length (Koa does for a
// string or JSON body); a chunked or unframed answer is counted as an error.

export interface SteadyLoadOptions {
  /** Origin, e.g. http://127.0.0.1:3000 */
  url: string;
  /** Requests per second. */
  rate: number;
  durationS: number;
  /**
   * Keep-alive connections, one request at a time each, taken in turn (the longest idle
   * first), so all of them carry traffic as in autocannon's passes and as with many clients;
   * requests due while all are busy wait, and that wait counts.
   */
  connections: number;
  /** The path of the i-th request. */
  path(i: number): string;
  headers: Record<string, string>;
}

export interface SteadyLoadResult {
  /** Requests per second completed over the pass. */
  rate: number;
  completed: number;
  non2xx: number;
  errors: number;
  /** Latency in ms from when each request was due to its last byte. */
  p50: number;
  p99: number;
  max: number;
}

const HEADER_END = Buffer.from('\r\n\r\n');

interface Connection {
  socket: net.Socket;
  /** Due time of the request in flight; null when idle. */
  dueAt: number | null;
  buffered: Buffer;
}

export async function steadyLoad(options: SteadyLoadOptions): Promise<SteadyLoadResult> {
  const { hostname, port } = new URL(options.url);
  const headerLines = Object.entries(options.headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  const requestBytes = (i: number) => Buffer.from(`GET ${options.path(i)} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${headerLines}\r\n`, 'latin1');
  const total = Math.max(1, Math.round(options.rate * options.durationS));
  const intervalMs = 1000 / options.rate;
  const latencies: number[] = [];
  const waiting: number[] = []; // due times of requests waiting for a free connection
  const idle: Connection[] = [];
  let sent = 0;
  let settledCount = 0;
  let non2xx = 0;
  let errors = 0;
  let started = 0;
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (finish = resolve));

  // A whole answer arrived: its latency, then the next waiting request on this connection.
  const answered = (connection: Connection) => {
    latencies.push(performance.now() - connection.dueAt!);
    connection.dueAt = null;
    if (++settledCount === total) finish();
    else dispatch(connection);
  };
  // The next waiting request, if any, on this (now idle) connection.
  const dispatch = (connection: Connection) => {
    const dueAt = waiting.shift();
    if (dueAt === undefined) {
      idle.push(connection);
      return;
    }
    connection.dueAt = dueAt;
    connection.socket.write(requestBytes(sent++));
  };
  // Whole responses in the buffer: status line, headers up to the blank line, Content-Length bytes.
  const read = (connection: Connection) => {
    for (;;) {
      const end = connection.buffered.indexOf(HEADER_END);
      if (end < 0 || connection.dueAt === null) return;
      const head = connection.buffered.toString('latin1', 0, end);
      const length = /\r\ncontent-length:\s*(\d+)/i.exec(head);
      if (length === null) {
        connection.socket.destroy();
        return;
      }
      const size = end + HEADER_END.length + Number(length[1]);
      if (connection.buffered.length < size) return;
      const status = Number(head.slice(9, 12));
      if (status < 200 || status >= 300) non2xx++;
      connection.buffered = connection.buffered.subarray(size);
      answered(connection);
    }
  };

  let open = Math.max(1, options.connections);
  const connections = await Promise.all(
    Array.from({ length: open }, () =>
      new Promise<Connection>((resolve, reject) => {
        const socket = net.connect(Number(port), hostname, () => resolve(connection));
        socket.setNoDelay(true);
        const connection: Connection = { socket, dueAt: null, buffered: Buffer.alloc(0) };
        socket.on('data', (chunk) => {
          connection.buffered = connection.buffered.length === 0 ? chunk : Buffer.concat([connection.buffered, chunk]);
          read(connection);
        });
        socket.once('error', reject);
        socket.on('error', () => undefined); // 'close' follows and accounts for it
        socket.on('close', () => {
          // A request in flight on a closed connection failed; the pass goes on with the
          // others, and ends with every request not answered counted as an error if none is left.
          const at = idle.indexOf(connection);
          if (at >= 0) idle.splice(at, 1);
          if (connection.dueAt !== null) {
            errors++;
            connection.dueAt = null;
            if (++settledCount === total) finish();
          }
          if (--open === 0 && settledCount < total) {
            errors += total - settledCount;
            settledCount = total;
            finish();
          }
        });
      }),
    ),
  );
  idle.push(...connections);

  started = performance.now();
  // Timers fire at best every millisecond: each tick releases every request that has come due
  // since the last one, each stamped with its own due time.
  const tick = () => {
    const due = Math.min(total, Math.floor((performance.now() - started) / intervalMs) + 1);
    for (let queued = sent + waiting.length; queued < due; queued++) waiting.push(started + queued * intervalMs);
    while (waiting.length > 0 && idle.length > 0) dispatch(idle.shift()!);
    if (sent + waiting.length < total) setTimeout(tick, Math.max(0, started + (sent + waiting.length) * intervalMs - performance.now()));
  };
  tick();
  await finished;
  const elapsedS = (performance.now() - started) / 1000;
  for (const c of connections) c.socket.destroy();

  latencies.sort((a, b) => a - b);
  const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] ?? NaN;
  return { rate: latencies.length / elapsedS, completed: latencies.length, non2xx, errors, p50: at(0.5), p99: at(0.99), max: latencies.at(-1) ?? NaN };
}
