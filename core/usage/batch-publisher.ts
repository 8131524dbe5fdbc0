/**
 * Gathers concurrent publishes into batches: while one batch is being written the next fills
 * up, and it goes as soon as the previous one lands (or after `lingerMs` when idle, or at
 * `maxBatch`). Each caller's promise settles with its own batch, so "resolved" still means
 * "my item is durable". One batch in flight at a time by default: order is kept and the
 * writer (a Kafka producer, a Postgres connection) sees one request, not one per call.
 */
export interface BatchPublisher<T> {
  add(item: T): Promise<void>;
  /** Resolves once everything added so far has been written (or refused). */
  drain(): Promise<void>;
}

/**
 * How long a caller may wait. The deadline is checked by a sweep every quarter of `ms` (at most
 * a second). A caller still queued at its deadline is refused and its item never written. A
 * batch still being written when its oldest caller's deadline passes has its writer told
 * (WriteDeadline: the writer cancels what it can) and its callers wait for the outcome one sweep more:
 * a write cancelled in time fails as usual and a write that lands resolves them, so they are
 * refused only when nothing is known by then. So each caller is answered within `ms` plus two
 * sweep periods. A write that lands after its callers were refused is reported to
 * `landedAfterRefusal`: its items are durable although their callers were refused.
 */
export interface BatchDeadline<T> {
  ms: number;
  refusal(): unknown;
  /** A batch still being written was refused: it may land all the same. */
  refusedWhileWriting?(items: T[]): void;
  landedAfterRefusal(items: T[]): void;
}

/**
 * A batch write's deadline, as the writer sees it: `passed` once the batch's oldest caller's
 * deadline has, and `onPass` to be told when that happens while the write runs (to cancel it).
 * Not an AbortSignal: one of those per batch (an EventTarget, made and collected ~800 times a
 * second at full load) cost the API ~2% of its CPU per call.
 */
export interface WriteDeadline {
  readonly passed: boolean;
  /** `cancel` runs once, if the deadline passes before the write has settled. */
  onPass(cancel: () => void): void;
}

export interface BatchPublisherOptions<T> {
  maxBatch: number;
  lingerMs: number;
  /** Batches written at once (default 1: in order). More lets a call wait for its own batch
   * only, not for the one ahead of it too; only for writers that need no order (a Postgres
   * table whose consumer claims rows by sequence, not a Kafka partition). */
  maxInFlight?: number;
  /** Without one, a caller waits as long as the write takes. */
  deadline?: BatchDeadline<T>;
}

interface Entry<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
  /** Date.now() at add, with a deadline only. */
  at: number;
}

interface Batch<T> extends WriteDeadline {
  entries: Entry<T>[];
  refused: boolean;
  /** Set when the oldest caller's deadline passes (the writer is told); refused a sweep later. */
  passed: boolean;
  cancel: (() => void) | undefined;
}

export function createBatchPublisher<T>(write: (items: T[], deadline?: WriteDeadline) => Promise<void>, options: BatchPublisherOptions<T>): BatchPublisher<T> {
  const queue: Entry<T>[] = [];
  const maxInFlight = Math.max(1, options.maxInFlight ?? 1);
  const inFlight = new Set<Promise<void>>();
  const { deadline } = options;
  // The batches being written, for the sweep (with a deadline only).
  const writing = new Set<Batch<T>>();
  let timer: NodeJS.Timeout | undefined;
  let sweeper: NodeJS.Timeout | undefined;

  const flush = async () => {
    const entries = queue.splice(0, options.maxBatch);
    const items = entries.map((p) => p.item);
    if (!deadline) {
      try {
        await write(items);
        for (const p of entries) p.resolve();
      } catch (err) {
        for (const p of entries) p.reject(err);
      }
      return;
    }
    const batch: Batch<T> = {
      entries,
      refused: false,
      passed: false,
      cancel: undefined,
      onPass(cancel) {
        this.cancel = cancel;
      },
    };
    writing.add(batch);
    try {
      await write(items, batch);
      if (batch.refused) deadline.landedAfterRefusal(items);
      else for (const p of entries) p.resolve();
    } catch (err) {
      if (!batch.refused) for (const p of entries) p.reject(err);
    } finally {
      writing.delete(batch);
    }
  };

  // One timer for every caller, not one each: a publish costs a Date.now() on the hot path.
  const sweep = () => {
    const expired = Date.now() - deadline!.ms;
    // Queued in arrival order: the expired ones are at the head.
    let n = 0;
    while (n < queue.length && queue[n]!.at <= expired) n += 1;
    for (const p of queue.splice(0, n)) p.reject(deadline!.refusal());
    for (const batch of writing) {
      if (batch.refused || batch.entries[0]!.at > expired) continue;
      if (!batch.passed) {
        batch.passed = true;
        batch.cancel?.();
        continue;
      }
      batch.refused = true;
      for (const p of batch.entries) p.reject(deadline!.refusal());
      deadline!.refusedWhileWriting?.(batch.entries.map((p) => p.item));
    }
    if (queue.length === 0 && writing.size === 0) {
      clearInterval(sweeper);
      sweeper = undefined;
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
        queue.push({ item, resolve, reject, at: deadline ? Date.now() : 0 });
        if (deadline && !sweeper) {
          sweeper = setInterval(sweep, Math.min(1_000, Math.max(10, deadline.ms / 4)));
          sweeper.unref();
        }
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
