import type { Db } from '../db/index.js';
import { lockWindowStart, type SignInLimits } from './sign-in.js';

// What each table must keep, and so what may go:
// - sign_in_attempts from untrusted browsers (device_id_hash null): the e-mail's lock reads them
//   only inside its window (lockWindowStart), its last success included.
// - sign_in_attempts from a trusted browser: its budget counts them with no time bound, for as
//   long as that browser stays trusted (up to DEVICE_TRUST_TTL_MS, 90 days, not the lock's
//   15 minutes). Once its trusted_devices row has expired or is gone (replaced at its next
//   success, forgotten, pruned) nothing reads them: its secret never comes back.
// - sessions: readSession reads only live ones. Ended ones are kept ENDED_SESSION_KEPT_MS more.
// - trusted_devices: trustedDeviceFor reads only unexpired ones.
// Every condition only ever becomes true with time, never false again, so a row one replica
// chose is still prunable when another deletes it; SKIP LOCKED lets two replicas pruning at once
// take different rows instead of waiting on each other's.

// A request that loaded its session just before it ended may still write to the row (a form's
// submission token, a flash): deleted under it, that form would be answered as sent twice.
const ENDED_SESSION_KEPT_MS = 60 * 60 * 1000;

const PRUNE_BATCH_SIZE = 5_000;

export interface PrunedSignInRows {
  signInAttempts: number;
  sessions: number;
  trustedDevices: number;
}

export interface PruneSignInRowsOptions {
  /** The limits the dashboard's sign-in runs with: its window says what the lock still reads. */
  limits: SignInLimits;
  now?: Date;
  batchSize?: number;
  /** Asked between batches: true ends the run early (the process is closing). */
  stopping?: () => boolean;
}

/**
 * Deletes the sign-in rows nothing reads any more, in batches of `batchSize`, each its own
 * statement, so a large backlog never holds many row locks or one long transaction.
 */
export async function pruneSignInRows(db: Db, options: PruneSignInRowsOptions): Promise<PrunedSignInRows> {
  const now = options.now ?? new Date();
  const batchSize = options.batchSize ?? PRUNE_BATCH_SIZE;
  const stopping = options.stopping ?? (() => false);
  const inBatches = async (table: string, where: string, bindings: Date[]): Promise<number> => {
    let deleted = 0;
    while (!stopping()) {
      const result = await db.raw<{ rowCount: number }>(
        `DELETE FROM ${table} WHERE ctid = ANY(ARRAY(SELECT ctid FROM ${table} WHERE ${where} LIMIT ? FOR UPDATE SKIP LOCKED))`,
        [...bindings, batchSize],
      );
      deleted += result.rowCount;
      if (result.rowCount < batchSize) break;
    }
    return deleted;
  };

  const trustedDevices = await inBatches('trusted_devices', 'expires_at <= ?', [now]);
  const untrusted = await inBatches('sign_in_attempts', 'device_id_hash IS NULL AND at <= ?', [lockWindowStart(now, options.limits)]);
  const fromTrusted = await inBatches(
    'sign_in_attempts',
    `device_id_hash IS NOT NULL AND NOT EXISTS (
       SELECT 1 FROM trusted_devices d WHERE d.id_hash = sign_in_attempts.device_id_hash AND d.expires_at > ?)`,
    [now],
  );
  const endedBefore = new Date(now.getTime() - ENDED_SESSION_KEPT_MS);
  const expired = await inBatches('sessions', 'expires_at <= ?', [endedBefore]);
  const signedOut = await inBatches('sessions', 'revoked_at <= ?', [endedBefore]);
  return { signInAttempts: untrusted + fromTrusted, sessions: expired + signedOut, trustedDevices };
}
