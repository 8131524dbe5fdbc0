/**
 * Gathers concurrent publishes into batches: while one batch is being written the next fills
 * up, and it goes as soon as the previous one lands (or after `lingerMs` when idle, or at
 * `maxBatch`). Each caller's promise settles with its own batch, so "resolved" still means
 * "my event is durable". One batch in flight at a time: order is kept and the writer (a
 * Kafka producer, a Postgres connection) sees one request, not one per call.
 */
export interface BatchPublisher<T> {
  add(item: T): Promise<void>;
  /** Resolves once everything added so far has been written (or refused). */
  drain(): Promise<void>;
}

export function createBatchPublisher<T>(write: (items: T[]) => Promise<void>, options: { maxBatch: number; lingerMs: number }): BatchPublisher<T> {
  const queue: { item: T; resolve: () => void; reject: (err: unknown) => void }[] = [];
  let inFlight: Promise<void> | undefined;
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
    if (inFlight || queue.length === 0) return;
    inFlight = flush().finally(() => {
      inFlight = undefined;
      pump(); // what queued up meanwhile has waited long enough: write it now
    });
  };

  return {
    add(item) {
      return new Promise<void>((resolve, reject) => {
        queue.push({ item, resolve, reject });
        if (inFlight) return; // pump() runs when it lands
        if (queue.length >= options.maxBatch) pump();
        else timer ??= setTimeout(pump, options.lingerMs);
      });
    },
    async drain() {
      while (queue.length > 0 || inFlight) {
        pump();
        await inFlight;
      }
    },
  };
}
