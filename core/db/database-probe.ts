import type pg from 'pg';
import { withinDeadline } from '../deadline/index.js';
import type { Db } from './create-db.js';
import { dropSocket } from './drop-socket.js';

/** The health checks' round trip to the database (SELECT 1 on a pooled connection). */
export type DatabaseProbe = () => Promise<void>;

// How long the round trip waits for its answer before dropping its connection. Longer than a
// probe's own deadline (a second: core/http-server/health.ts), so a database slow for a moment
// keeps its connection; short enough that a connection to a server that will never answer is
// not held for the kernel's 15 minutes, and that /healthz sees a database back within seconds.
const ABANDON_AFTER_MS = 5_000;

// What the probe needs of knex's pg client: a pooled connection of its own, so that it can drop
// that connection's socket (knex's own .timeout() would leave the query holding it).
interface PooledPgClient {
  acquireConnection(): Promise<pg.Client>;
  releaseConnection(connection: pg.Client): Promise<unknown>;
}

/**
 * One probe per pool (openDatabase makes it, every /healthz of the process uses it): compose
 * healthchecks and load balancers ask every few seconds, and each probe's SELECT 1 on a server
 * that stopped answering without closing (frozen, a partition) would keep its pooled connection
 * long after the probe answered 503, until the pool was full of them and the calls the caches
 * could still serve waited for a connection. So a probe arriving while a round trip is in flight
 * awaits that one (within its own deadline), and a round trip unanswered after `abandonAfterMs`
 * drops its connection, which the pool then discards: probes hold at most one connection.
 */
export function createDatabaseProbe(db: Db, options: { abandonAfterMs?: number } = {}): DatabaseProbe {
  const abandonAfterMs = options.abandonAfterMs ?? ABANDON_AFTER_MS;
  const client = db.client as unknown as PooledPgClient;
  let inFlight: Promise<void> | undefined;

  const roundTrip = async () => {
    const connection = await client.acquireConnection();
    try {
      await withinDeadline(abandonAfterMs, connection.query('SELECT 1'), () => new Error(`no answer to the health check within ${abandonAfterMs} ms`));
    } catch (err) {
      // Unanswered, the query would keep the connection busy for ever; failed, it is not worth
      // keeping. Its end marks it for knex, and the pool discards it instead of handing it out.
      dropSocket(connection);
      throw err;
    } finally {
      await client.releaseConnection(connection);
    }
  };

  return () => {
    inFlight ??= roundTrip().finally(() => {
      inFlight = undefined;
    });
    return inFlight;
  };
}
