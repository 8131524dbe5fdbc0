/**
 * Gathers concurrent publishes into batches: while one batch is being written the next fills
 * up, and it goes as soon as the previous one lands (or after `lingerMs` when idle, or at
 * `maxBatch`). Each caller's promise settles with its own batch, so "resolved" still means
 * "my event is durable". One batch in flight at a time by default: order is kept and the
 * writer (a Kafka producer, a Postgres connection) sees one request, not one per call.
 */
export interface BatchPublisher<T> {
  add(item: T): Promise<void>;
  /** Resolves once everything added so far has been written (or refused). */
  drain(): Promise<void>;
}

export interface BatchPublisherOptions {
  maxBatch: number;
  lingerMs: number;
  /** Batches written at once (default 1: in order). More lets a call wait for its own batch
   * only, not for the one ahead of it too; only for writers that need no order (a Postgres
   * table whose consumer claims rows by sequence, not a Kafka partition). */
  maxInFlight?: number;
}

export function createBatchPublisher<T>(write: (items: T[]) => Promise<void>, options: BatchPublisherOptions): BatchPublisher<T> {
  const queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  const maxInFlight = Math.max(1, options.maxInFlight ?? 1);
  const inFlight = new Set<Promise<void>>();
  let timer: NodeJS.Timeout | undefined;

  const flush = async () => {
    const batch = queue.splice(0, options.maxBatch);
    try {
      await write(batch.map((p) => p.item));
      for (const p of batch) p.resolve();
    } catch (err) {
      for (const p of batch) p.reject(err);
    }
  };

  const pump = () => {
    if (timer) {
      clearTimeout(timer);
      timer = undefined;
    }
    while (inFlight.size < maxInFlight && queue.length > 0) {
      const written: Promise<void> = flush().finally(() => {
        inFlight.delete(written);
        pump(); // what queued up meanwhile has waited long enough: write it now
      });
      inFlight.add(written);
    }
  };

  return {
    add(item) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (inFlight.size >= maxInFlight) return; // pump() runs when one lands
        if (queue.length >= options.maxBatch) pump();
        else timer ??= setTimeout(pump, options.lingerMs);
      });
    },
    async drain() {
      while (queue.length > 0 || inFlight.size > 0) {
        pump();
        await Promise.all(inFlight);
      }
    },
  };
}
