import type { Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';

export interface LastUsedRecorder {
  record(keyId: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const CHUNK = 5_000;

/**
 * last_used_at without a write per request: the time each key was last seen since the last
 * flush is kept in a Map and written by one UPDATE every `intervalMs`. The time written is the
 * call's, not the flush's: a key revoked between its last call and the flush would otherwise
 * show a "last used" after its revocation. GREATEST keeps another process's later time. A failed
 * flush keeps its times for the next one. (The api_keys trigger ignores last_used_at, so this
 * notifies nobody.)
 */
export function createLastUsedRecorder(options: { db: Db; intervalMs?: number; logger: Logger; now?: () => number }): LastUsedRecorder {
  const now = options.now ?? Date.now;
  let pending = new Map<string, number>();
  let flushing: Promise<void> | undefined;

  const remember = (keyId: string, at: number) => {
    const known = pending.get(keyId);
    if (known === undefined || at > known) pending.set(keyId, at);
  };

  const flush = async (): Promise<void> => {
    if (flushing) await flushing;
    if (pending.size === 0) return;
    const seen = [...pending];
    pending = new Map();
    flushing = (async () => {
      try {
        for (let i = 0; i < seen.length; i += CHUNK) {
          const chunk = seen.slice(i, i + CHUNK);
          await options.db.raw(
            `UPDATE api_keys k SET last_used_at = GREATEST(k.last_used_at, v.at)
               FROM unnest(?::text[], ?::timestamptz[]) AS v(id, at)
              WHERE k.id = v.id`,
            [chunk.map(([id]) => id), chunk.map(([, at]) => new Date(at).toISOString())],
          );
        }
      } catch (err) {
        for (const [id, at] of seen) remember(id, at);
        options.logger.warn('could not record key last use; will retry', { err, keys: seen.length });
      }
    })();
    try {
      await flushing;
    } finally {
      flushing = undefined;
    }
  };

  const timer = setInterval(() => void flush(), options.intervalMs ?? 10_000);
  timer.unref();

  return {
    record: (keyId) => remember(keyId, now()),
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
