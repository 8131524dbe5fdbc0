import type { Knex } from 'knex';
import { AppError } from '../errors/index.js';
import type { Logger } from '../logging/index.js';

export interface StoreQueryOptions {
  queryTimeoutMs: number;
  logger: Logger;
}

const QUERY_CANCELED = '57014'; // Postgres: statement_timeout or pg_cancel_backend

/**
 * Runs one store query under the store's deadline and turns failures into the two errors the
 * catalogue has for them. The deadline covers waiting for a pooled connection as well as the
 * query. When it passes, knex's timeout with `cancel` sends pg_cancel_backend, so Postgres
 * really stops the statement instead of running it to the end for nobody. The real error only
 * goes to the log: the caller's message is the catalogue's.
 */
export async function runStoreQuery<T>(options: StoreQueryOptions, what: string, query: Knex.Raw<T>): Promise<T> {
  const { queryTimeoutMs, logger } = options;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineExceeded()), queryTimeoutMs);
  });
  try {
    return await Promise.race([query.timeout(queryTimeoutMs, { cancel: true }) as unknown as Promise<T>, deadline]);
  } catch (err) {
    if (isTimeout(err)) {
      logger.warn('company store query timed out', { query: what, timeoutMs: queryTimeoutMs });
      throw new AppError('upstream_timeout', undefined, { cause: err });
    }
    logger.error('company store query failed', { query: what, err });
    throw new AppError('upstream_error', undefined, { cause: err });
  } finally {
    clearTimeout(timer);
  }
}

class DeadlineExceeded extends Error {
  override name = 'DeadlineExceeded';
}

function isTimeout(err: unknown): boolean {
  if (err instanceof DeadlineExceeded) return true;
  const e = err as { name?: string; code?: string } | null;
  return e?.name === 'KnexTimeoutError' || e?.code === QUERY_CANCELED;
}
