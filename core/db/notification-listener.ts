import type pg from 'pg';
import { withinDeadline } from '../deadline/index.js';
import type { Logger } from '../logging/index.js';
import { createListenClient } from './create-db.js';
import { dropSocket } from './drop-socket.js';

export type NotificationHandler = (payload: string) => void;
/** `connected` true after every (re)connect: notifications sent while down were missed. */
export type ConnectionHandler = (connected: boolean) => void;

export interface NotificationListener {
  readonly connected: boolean;
  subscribe(channel: string, handler: NotificationHandler): void;
  onConnectionChange(handler: ConnectionHandler): void;
  /** Resolves once LISTEN is active on every subscribed channel (start-up, tests). */
  whenConnected(): Promise<void>;
  close(): Promise<void>;
}

export interface NotificationListenerOptions {
  connectionString: string;
  logger: Logger;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** A query on the idle connection to notice a half-open socket that never reports an error. */
  heartbeatMs?: number;
  /**
   * How long that query may take before the connection counts as lost. On a half-open socket
   * (the server's host frozen, a path dropping packets) it never answers and never fails: the
   * kernel's retransmissions give up after some 15 minutes, and all that time the listener
   * would call itself connected while no notification arrives.
   */
  heartbeatTimeoutMs?: number;
  /** How long a (re)connect may take (createListenClient's default otherwise). */
  connectTimeoutMs?: number;
}

const CHANNEL = /^[a-z_][a-z0-9_]*$/;
// How long close() waits for the server's answer to its goodbye: a server that answers at all
// does so in milliseconds.
const GOODBYE_MS = 1_000;

/** `work`, or a rejection once `ms` have passed without it settling. */
const withinMs = <T>(ms: number, what: string, work: Promise<T>): Promise<T> => withinDeadline(ms, work, () => new Error(`no answer to ${what} within ${ms} ms`));

/**
 * One long-lived LISTEN connection shared by the caches of a process. It reconnects with
 * exponential backoff for ever; subscribers learn about each disconnect and reconnect so they
 * can shorten trust while blind and revalidate what they hold once back.
 */
export function createNotificationListener(options: NotificationListenerOptions): NotificationListener {
  const minBackoff = options.minBackoffMs ?? 100;
  const maxBackoff = options.maxBackoffMs ?? 5_000;
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ?? 5_000;
  const handlers = new Map<string, NotificationHandler[]>();
  const connectionHandlers: ConnectionHandler[] = [];
  let client: pg.Client | undefined;
  let connected = false;
  let closed = false;
  let backoff = minBackoff;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  let waiters: (() => void)[] = [];

  const setConnected = (value: boolean) => {
    if (connected === value) return;
    connected = value;
    for (const handler of connectionHandlers) handler(value);
    if (value) {
      for (const resolve of waiters) resolve();
      waiters = [];
    }
  };

  const lost = (c: pg.Client, err?: unknown) => {
    if (client !== c) return; // an old client reporting late
    client = undefined;
    if (heartbeat) clearInterval(heartbeat);
    c.removeAllListeners('notification');
    c.on('error', () => {}); // the dead socket may still emit; never crash the process for it
    void c.end().catch(() => {});
    dropSocket(c);
    if (closed) return;
    if (connected) options.logger.warn('notification listener disconnected; reconnecting', { err });
    setConnected(false);
    retryTimer = setTimeout(connect, backoff);
    retryTimer.unref();
    backoff = Math.min(backoff * 2, maxBackoff);
  };

  const connect = async () => {
    if (closed) return;
    const c = createListenClient(options.connectionString, { connectTimeoutMs: options.connectTimeoutMs });
    client = c;
    c.on('error', (err) => lost(c, err));
    c.on('end', () => lost(c));
    c.on('notification', (msg) => {
      for (const handler of handlers.get(msg.channel) ?? []) handler(msg.payload ?? '');
    });
    try {
      await c.connect();
      // Bounded as the heartbeat is: a socket that froze right after connecting would otherwise
      // leave this start waiting for ever, with no heartbeat yet to notice.
      for (const channel of handlers.keys()) await withinMs(heartbeatTimeoutMs, `LISTEN ${channel}`, c.query(`LISTEN ${channel}`));
      if (client !== c || closed) return;
      backoff = minBackoff;
      let beating = false;
      heartbeat = setInterval(() => {
        // One at a time: on a socket that stopped answering, more would only queue behind it.
        if (beating) return;
        beating = true;
        withinMs(heartbeatTimeoutMs, 'the heartbeat', c.query('SELECT 1')).then(
          () => (beating = false),
          (err: unknown) => lost(c, err),
        );
      }, heartbeatMs);
      heartbeat.unref();
      setConnected(true);
    } catch (err) {
      options.logger.debug('notification listener could not connect', { err });
      lost(c, err);
    }
  };

  void connect();

  return {
    get connected() {
      return connected;
    },
    subscribe(channel, handler) {
      if (!CHANNEL.test(channel)) throw new Error(`invalid channel name: ${channel}`);
      const list = handlers.get(channel);
      if (list) {
        list.push(handler);
        return;
      }
      handlers.set(channel, [handler]);
      // Already connected: start listening now; a failure here drops the connection, and the
      // reconnect LISTENs on every channel.
      const c = client;
      if (c && connected) c.query(`LISTEN ${channel}`).catch((err) => lost(c, err));
    },
    onConnectionChange(handler) {
      connectionHandlers.push(handler);
    },
    whenConnected() {
      return connected ? Promise.resolve() : new Promise((resolve) => waiters.push(resolve));
    },
    async close() {
      closed = true;
      if (retryTimer) clearTimeout(retryTimer);
      if (heartbeat) clearInterval(heartbeat);
      const c = client;
      client = undefined;
      connected = false;
      if (c) {
        c.removeAllListeners();
        c.on('error', () => {});
        // A goodbye the server never answers (a socket that stopped answering) must not hold up
        // the process's shutdown: past GOODBYE_MS, the socket is dropped. Not the heartbeat's
        // deadline (5 s): a stop also waits for the pool's close after this one (5 s at most), and
        // the two in a row took an API 10 s to stop, past a supervisor's usual grace with the
        // HTTP drain before them.
        await withinMs(Math.min(heartbeatTimeoutMs, GOODBYE_MS), 'the goodbye', c.end()).catch(() => dropSocket(c));
      }
    },
  };
}
