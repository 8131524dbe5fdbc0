import type { Knex } from 'knex';
import type pg from 'pg';

// The advisory lock every migrator of ours holds for its whole run, so that processes started
// together (replicas of a scaled-out service, a worker, `cli migrate up`) take turns: the first
// applies what is pending, the others then find nothing left to do. Any fixed bigint would do;
// the only other advisory locks (the dashboard's sign-in, per e-mail) use the two-number form,
// which never meets a one-number key, and they are per database, so separate
// databases on one server never wait for each other. Changing it lets an old and a new version
// migrate at the same time: keep it.
export const MIGRATION_LOCK_KEY = '4774951003241102001';

// Polling, not a waiting pg_advisory_lock: a waiting statement holds a snapshot, and CREATE
// INDEX CONCURRENTLY (migrations with `transaction: false`) waits for every older snapshot in
// the database to go. The holder's index build would wait for the waiters, and they for the
// lock the holder's idle session keeps: a deadlock Postgres cannot see (it runs through our
// process), so every replica would hang at start. Between tries this connection holds none.
const RETRY_MS = 250;

/** The session that holds the migration lock, as pg_stat_activity tells it. */
export interface MigrationLockHolder {
  pid: number;
  /** Its application_name: ours say which service or command it is (api, cli-migrate, …). */
  application: string;
  /** Its client address; null over a Unix socket. */
  client: string | null;
  /** When its session began: the lock's own connection, opened just before taking it. */
  since: Date;
}

export interface MigrationLockEvents {
  /**
   * Another session holds the lock: we wait for it. Called when the wait begins and again every
   * `remindEveryMs` while it lasts, with who holds it (null when it was let go meanwhile, or the
   * server does not show it to us) and how long we have waited.
   */
  waiting(holder: MigrationLockHolder | null, waitedMs: number): void;
}

/**
 * Runs `run` while holding MIGRATION_LOCK_KEY, waiting as long as another migrator holds it.
 * The lock is a session lock on a connection of its own, outside the pool (whose size may
 * leave the migrations none to spare), and it goes with that connection: ended in `finally`,
 * it is released whether `run` succeeds or fails, and by the server if this process dies.
 * Beware: it also goes if only that idle connection is cut (a proxy's or idle_session_timeout's
 * limit) while the migrations go on through the pool; a migrator starting then would take it
 * and clear knex's row as stale.
 *
 * The wait has no end of its own: a long migration is a reason to wait, and only a person can
 * tell it from a stuck one. So it says who holds the lock, and says it again while it waits.
 */
export async function withMigrationLock<T>(db: Knex, events: MigrationLockEvents, run: () => Promise<T>, options: { remindEveryMs?: number } = {}): Promise<T> {
  const remindEveryMs = options.remindEveryMs ?? 30_000;
  const connection = (await db.client.acquireRawConnection()) as pg.Client;
  try {
    if (!(await tryLock(connection))) {
      const began = Date.now();
      let nextReminder = began;
      do {
        if (Date.now() >= nextReminder) {
          // 0 the first time: "the wait begins", whatever the clock ticked since `began`.
          const waitedMs = nextReminder === began ? 0 : Date.now() - began;
          events.waiting(await lockHolder(connection), waitedMs);
          nextReminder += remindEveryMs;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      } while (!(await tryLock(connection)));
    }
    return await run();
  } finally {
    // A connection that cannot be ended cleanly is a lost one, and the server has released
    // its lock with it: nothing is left to undo, and `run`'s own error must not be hidden.
    await db.client.destroyRawConnection(connection).catch(() => undefined);
  }
}

// An advisory lock on a bigint key shows in pg_locks as its high and low 32 bits, objsubid 1
// (2 for a key of two int4s).
async function lockHolder(connection: pg.Client): Promise<MigrationLockHolder | null> {
  const { rows } = await connection.query<{ pid: number; application: string; client: string | null; since: Date }>(
    `SELECT a.pid, a.application_name AS application, host(a.client_addr) AS client, a.backend_start AS since
       FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
      WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        AND ((l.classid::bigint << 32) | l.objid::bigint) = $1::bigint`,
    [MIGRATION_LOCK_KEY],
  );
  return rows[0] ?? null;
}

async function tryLock(connection: pg.Client): Promise<boolean> {
  const { rows } = await connection.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS locked', [MIGRATION_LOCK_KEY]);
  return rows[0]!.locked;
}
