import { inspect } from 'node:util';
import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { dropSocket } from './drop-socket.js';
import type { Logger } from '../logging/index.js';

export type Db = Knex;

// Per-pool type parsers rather than pg's global ones, so no module mutates shared state:
// int8 (bigint: usage, money, ids) becomes a JS number — our values stay far below 2^53 —
// and `date` stays the ISO string we return to callers instead of a local-time Date.
const INT8 = 20;
const DATE = 1082;
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === INT8) return (v: string) => Number(v);
    if (oid === DATE) return (v: string) => v;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

// TCP keepalive on every connection we open. Without it a server whose host died, or a network
// path that drops packets without a RST, leaves the socket open for ever, and with it whatever
// waits on it: a pooled connection, the LISTEN client. After 10 s without traffic the kernel
// probes (Node sets 10 probes 1 s apart), so an idle connection to a dead peer errors within
// about 20 s. A backstop only: no probe goes while a query waits for its acknowledgement (then
// the kernel's retransmissions give up after some 15 minutes), and a host whose kernel still
// answers (Postgres itself frozen) passes them. The billing worker's stall watchdog is what
// notices a batch that waits for ever (billing-worker/stall-watchdog.ts).
const keepAlive = { keepAlive: true, keepAliveInitialDelayMillis: 10_000 };

// How long opening a connection may take, pooled or LISTEN: pg's default is no limit, and a
// connect to a server that accepts and never answers (frozen, a partition) would wait for ever.
// In the pool, knex stops waiting after its acquire timeout (5 s) and tarn after 30 s, but the
// socket stayed open behind them: one more per attempt for as long as the server was away. A
// little over the acquire timeout, so that is still what a caller is told (KnexTimeoutError).
const CONNECT_TIMEOUT_MS = 10_000;

export interface DbOptions {
  connectionString: string;
  poolMax?: number;
  applicationName?: string;
  /** Where knex's own warnings go; without it knex prints them on stdout (console.log). */
  logger?: Logger;
  /**
   * Postgres ends a session of this pool left idle inside a transaction for longer, rolling it
   * back: the locks of a client that will never come back are released. Only for a pool whose
   * transactions wait on nothing but the database (the billing worker's). Unset: never.
   */
  idleInTransactionTimeoutMs?: number;
}

// Each pool's open connections, for dropPooledConnections.
const pooled = new WeakMap<Knex, Set<pg.Client>>();

/**
 * Closes the sockets of every connection `db`'s pool still holds, at once, without goodbyes:
 * for a close (destroy()) that waits on a server that stopped answering, whose sockets would
 * otherwise keep the process alive for the kernel's 15 minutes. Their transactions roll back
 * when the server notices.
 */
export function dropPooledConnections(db: Knex): number {
  const clients = [...(pooled.get(db) ?? [])];
  for (const client of clients) dropSocket(client);
  return clients.length;
}

export function createDb(options: DbOptions): Db {
  const clients = new Set<pg.Client>();
  const idleInTransaction = options.idleInTransactionTimeoutMs === undefined ? {} : { idle_in_transaction_session_timeout: options.idleInTransactionTimeoutMs };
  const db = knexFactory({
    client: 'pg',
    connection: {
      connectionString: options.connectionString,
      types,
      application_name: options.applicationName ?? 'italian-company-data',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      ...keepAlive,
      ...idleInTransaction,
    } as Knex.PgConnectionConfig,
    pool: {
      min: 0,
      max: options.poolMax ?? 10,
      afterCreate(client: pg.Client, done: (err: Error | null, client: pg.Client) => void) {
        clients.add(client);
        client.once('end', () => clients.delete(client));
        done(null, client);
      },
    },
    // Fail fast when Postgres is down instead of queueing requests for knex's default 60 s.
    acquireConnectionTimeout: 5_000,
    ...(options.logger ? { log: knexLog(options.logger) } : {}),
  });
  pooled.set(db, clients);
  return db;
}

// knex writes its warnings with console.log: on stdout, where the CLI's results go, with a
// stack, in no format a log collector parses. Those that say again what a rejection already
// carries are debug lines here: "Acquire connection error" comes with the rejection of the
// query that could not get a connection, "Connection Error" (a pooled connection dropped) with
// that of the query running on it, if any (the pool replaces an idle one unasked), and a failed
// migration's two lines with migrateLatest's error, which names the migration. Whoever made the
// call reports its rejection: the CLI as one line, the services in their own log entry.
function knexLog(logger: Logger): Knex.Logger {
  const text = (message: unknown) => (typeof message === 'string' ? message : inspect(message, { depth: 3 }));
  return {
    debug: (message: unknown) => logger.debug('knex', { detail: text(message) }),
    warn: (message: unknown) => {
      const line = text(message);
      if (/^(Acquire connection error|Connection Error|migration file ".*" failed|migration failed with error)/.test(line)) logger.debug('knex warning', { detail: line });
      else logger.warn('knex warning', { detail: line });
    },
    error: (message: unknown) => logger.error('knex error', { detail: text(message) }),
    // knex hands this one its finished sentence ("x is deprecated, please use y"), not two names.
    deprecate: (message: string) => logger.warn('knex deprecation', { detail: message }),
  };
}

/** A plain pg client for LISTEN, which needs one long-lived connection outside the pool. */
export function createListenClient(connectionString: string, options: { connectTimeoutMs?: number } = {}): pg.Client {
  return new pg.Client({ connectionString, types, ...keepAlive, connectionTimeoutMillis: options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS });
}
