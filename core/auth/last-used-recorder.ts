import type { Db } from '../db/index.js';
import type { Logger } from '../logging/index.js';

export interface LastUsedRecorder {
  record(keyId: string): void;
  flush(): Promise<void>;
  close(): Promise<void>;
}

const CHUNK = 5_000;

/**
 * last_used_at without a write per request: ids seen since the last flush are kept in a Set
 * and written by one UPDATE every `intervalMs`. The timestamp is therefore accurate to the
 * interval, which is all a "last used" column is for. A failed flush keeps its ids for the
 * next one. (The api_keys trigger ignores last_used_at, so this notifies nobody.)
 */
export function createLastUsedRecorder(options: { db: Db; intervalMs?: number; logger: Logger }): LastUsedRecorder {
  let pending = new Set<string>();
  let flushing: Promise<void> | undefined;

  const flush = async (): Promise<void> => {
    if (flushing) await flushing;
    if (pending.size === 0) return;
    const ids = [...pending];
    pending = new Set();
    flushing = (async () => {
      try {
        for (let i = 0; i < ids.length; i += CHUNK) {
          await options.db('api_keys').whereIn('id', ids.slice(i, i + CHUNK)).update({ last_used_at: options.db.fn.now() });
        }
      } catch (err) {
        for (const id of ids) pending.add(id);
        options.logger.warn('could not record key last use; will retry', { err, keys: ids.length });
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
    record: (keyId) => void pending.add(keyId),
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
