import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { retryOnDroppedConnection, type Db } from '../db/index.js';
import { AppError } from '../errors/index.js';
import type { Logger } from '../logging/index.js';

export interface StoreQueryOptions {
  queryTimeoutMs: number;
  logger: Logger;
}

/** A statement the store prepares once per pooled connection ($1.. parameters). */
export interface StoreStatement {
  name: string;
  text: string;
}

export function storeStatement(label: string, text: string): StoreStatement {
  return { name: `company_store_${label}_${createHash('sha1').update(text).digest('hex').slice(0, 10)}`, text };
}

// What the store needs of knex's pg client: a pooled pg connection, run with a named
// (prepared) statement, which knex's query builder cannot do. Parsing and planning the report
// query costs more than running it, so it is prepared once per connection. cancelQuery is
// what knex's own `.timeout(ms, { cancel: true })` calls: pg_cancel_backend from a separate
// connection, so a cancel gets through even when the pool is exhausted.
interface PgConnection {
  query(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: unknown[] }>;
}
interface PooledPgClient {
  acquireConnection(): Promise<PgConnection>;
  releaseConnection(connection: PgConnection): Promise<unknown>;
  cancelQuery(connection: PgConnection): Promise<unknown>;
}

const QUERY_CANCELED = '57014'; // Postgres: statement_timeout or pg_cancel_backend

/**
 * Runs one prepared store statement under the store's deadline, which covers waiting for a
 * pooled connection as well as the query, and turns failures into the two errors the
 * catalogue has for them. When the deadline passes during the query, Postgres is told to
 * cancel it: it stops instead of running to the end for nobody, and the connection goes back
 * to the pool once the cancel lands. The real error only goes to the log; the caller's
 * message is the catalogue's.
 */
export async function runPreparedStoreQuery<Row>(options: StoreQueryOptions & { db: Db }, what: string, statement: StoreStatement, values: unknown[]): Promise<Row[]> {
  const { queryTimeoutMs, logger } = options;
  const client = options.db.client as unknown as PooledPgClient;
  let timedOut = false;
  let running: PgConnection | undefined;
  let timer: NodeJS.Timeout | undefined;

  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      timedOut = true;
      reject(new DeadlineExceeded());
      if (running) cancel(client, running, logger, what);
    }, queryTimeoutMs);
  });
  const attempt = async (): Promise<Row[]> => {
    const connection = await client.acquireConnection();
    try {
      if (timedOut) throw new DeadlineExceeded(); // the wait for a connection used the time up
      running = connection;
      const result = await connection.query({ name: statement.name, text: statement.text, values });
      return result.rows as Row[];
    } finally {
      running = undefined;
      await client.releaseConnection(connection);
    }
  };
  // A pooled connection the server dropped (pg_terminate_backend, a failover) fails this query
  // only: again on the next ones, within the same deadline, as the key and plan reads do.
  const work = retryOnDroppedConnection(attempt, () => timedOut);

  try {
    return await Promise.race([work, deadline]);
  } catch (err) {
    throw storeError(err, options, what);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The same deadline and error mapping for an ad-hoc knex query (searches, structure walks),
 * which is not prepared: the deadline runs from the call, and knex's `.timeout` with `cancel`
 * has Postgres cancel the statement.
 */
export async function runStoreQuery<T>(options: StoreQueryOptions, what: string, query: Knex.Raw<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded()), options.queryTimeoutMs);
  });
  try {
    return await Promise.race([query.timeout(options.queryTimeoutMs, { cancel: true }) as unknown as Promise<T>, deadline]);
  } catch (err) {
    throw storeError(err, options, what);
  } finally {
    clearTimeout(timer);
  }
}

function storeError(err: unknown, { queryTimeoutMs, logger }: StoreQueryOptions, what: string): AppError {
  if (isTimeout(err)) {
    logger.warn('company store query timed out', { query: what, timeoutMs: queryTimeoutMs });
    return new AppError('upstream_timeout', undefined, { cause: err });
  }
  logger.error('company store query failed', { query: what, err });
  return new AppError('upstream_error', undefined, { cause: err });
}

function cancel(client: PooledPgClient, connection: PgConnection, logger: Logger, what: string): void {
  client.cancelQuery(connection).catch((err: unknown) => {
    // The query then runs to its end and its connection returns to the pool afterwards.
    logger.warn('could not cancel a timed-out company store query', { query: what, err });
  });
}

class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
}

function isTimeout(err: unknown): boolean {
  if (err instanceof DeadlineExceeded) return true;
  const e = err as { name?: string; code?: string } | null;
  // KnexTimeoutError: no pooled connection became free within knex's acquire timeout.
  return e?.name === 'KnexTimeoutError' || e?.code === QUERY_CANCELED;
}
