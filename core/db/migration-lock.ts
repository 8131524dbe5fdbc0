import type { Knex } from 'knex';
import type pg from 'pg';

// The advisory lock every migrator of ours holds for its whole run, so that processes started
// together (replicas of a scaled-out service, a worker, `cli migrate up`) take turns: the first
// applies what is pending, the others then find nothing left to do. Any fixed bigint would do;
// nothing else in the product takes advisory locks, and they are per database, so separate
// databases on one server never wait for each other. Changing it lets an old and a new version
// migrate at the same time: keep it.
export const MIGRATION_LOCK_KEY = '4774951003241102001';

// Polling, not a waiting pg_advisory_lock: a waiting statement holds a snapshot, and CREATE
// INDEX CONCURRENTLY (migrations with `transaction: false`) waits for every older snapshot in
// the database to go. The holder's index build would wait for the waiters, and they for the
// lock the holder's idle session keeps: a deadlock Postgres cannot see (it runs through our
// process), so every replica would hang at start. Between tries this connection holds none.
const RETRY_MS = 250;

export interface MigrationLockEvents {
  /** Another session holds the lock: we are about to wait for it. */
  waiting(): void;
}

/**
 * Runs `run` while holding MIGRATION_LOCK_KEY, waiting as long as another migrator holds it.
 * The lock is a session lock on a connection of its own, outside the pool (whose size may
 * leave the migrations none to spare), and it goes with that connection: ended in `finally`,
 * it is released whether `run` succeeds or fails, and by the server if this process dies.
 * Beware: it also goes if only that idle connection is cut (a proxy's or idle_session_timeout's
 * limit) while the migrations go on through the pool; a migrator starting then would take it
 * and clear knex's row as stale.
 */
export async function withMigrationLock<T>(db: Knex, events: MigrationLockEvents, run: () => Promise<T>): Promise<T> {
  const connection = (await db.client.acquireRawConnection()) as pg.Client;
  try {
    if (!(await tryLock(connection))) {
      events.waiting();
      while (!(await tryLock(connection))) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    return await run();
  } finally {
    // A connection that cannot be ended cleanly is a lost one, and the server has released
    // its lock with it: nothing is left to undo, and `run`'s own error must not be hidden.
    await db.client.destroyRawConnection(connection).catch(() => undefined);
  }
}

async function tryLock(connection: pg.Client): Promise<boolean> {
  const { rows } = await connection.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [MIGRATION_LOCK_KEY]);
  return rows[0]!.locked;
}
