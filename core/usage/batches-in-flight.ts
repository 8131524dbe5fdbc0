/**
 * The batch transactions a usage consumer has open, for the billing worker's stall watchdog.
 * Each counts from before its BEGIN until it has committed or rolled back, the claim included:
 * a connection that stopped answering hangs whichever statement comes next, as often the BEGIN
 * or the claim of the next batch as a statement of applying one.
 */
export interface BatchesInFlight {
  /** Runs `transaction`, counting it in flight until it settles. */
  run<T>(transaction: () => Promise<T>): Promise<T>;
  /** The oldest of those still open: when it began, and for how long it has been open; null when none is. */
  oldest(): BatchInFlight | null;
}

export interface BatchInFlight {
  since: Date;
  /** Measured on the monotonic clock: a step of the wall clock (an NTP correction) is no stall. */
  openMs: number;
}

export function createBatchesInFlight(): BatchesInFlight {
  // A Set iterates in insertion order: the first entry left is the oldest still open.
  const open = new Set<{ since: Date; began: number }>();
  return {
    async run(transaction) {
      const entry = { since: new Date(), began: performance.now() };
      open.add(entry);
      try {
        return await transaction();
      } finally {
        open.delete(entry);
      }
    },
    oldest() {
      for (const entry of open) return { since: entry.since, openMs: performance.now() - entry.began };
      return null;
    },
  };
}
