/**
 * Tells the Postgres bus's consumers (LISTEN `usage_bus`) that batches have landed: at once
 * after the first batch of a quiet spell, then at most once per `intervalMs`, and always once
 * after the last batch of a busy spell (a trailing wake-up at the end of the interval).
 *
 * Why not a NOTIFY in every batch's transaction (the statement trigger migration 011 dropped):
 * Postgres serialises the commits of notifying transactions on one database-wide lock, held
 * through the commit's WAL flush, so two batches in flight committed one after the other; and
 * each NOTIFY signals every listening backend of the database (every API, tool-server and
 * worker process holds one), which wakes to read it. Measured 24 Nov 2026 with four processes
 * listening, financials at full load (two API processes in alternating slices, one with each
 * table): 11.0 → 7.5 µs of database CPU per call and 15% more calls per second. With the one
 * listener of `npm run bench` the difference is within the noise. A wake-up that is lost costs
 * nothing but latency: the consumer also polls.
 */
export interface ConsumerWaker {
  /** A batch has committed: make sure a wake-up follows within `intervalMs`. */
  batchLanded(): void;
  /** Sends a wake-up still due, and waits for the one being sent. */
  close(): Promise<void>;
}

export interface ConsumerWakerOptions {
  notify(): Promise<void>;
  intervalMs: number;
  /** A failed wake-up (the consumer's poll covers it); the next batch tries again. */
  onError(err: unknown): void;
}

export function createConsumerWaker(options: ConsumerWakerOptions): ConsumerWaker {
  let lastSentAt = Number.NEGATIVE_INFINITY;
  let timer: NodeJS.Timeout | undefined;
  const sending = new Set<Promise<void>>();

  const send = () => {
    timer = undefined;
    lastSentAt = Date.now();
    const sent: Promise<void> = options
      .notify()
      .catch(options.onError)
      .finally(() => sending.delete(sent));
    sending.add(sent);
  };

  return {
    batchLanded() {
      if (timer) return; // a wake-up is already due, and it will cover this batch too
      const wait = lastSentAt + options.intervalMs - Date.now();
      if (wait <= 0) send();
      else timer = setTimeout(send, wait).unref();
    },
    async close() {
      if (timer) {
        clearTimeout(timer);
        send();
      }
      await Promise.all(sending);
    },
  };
}
