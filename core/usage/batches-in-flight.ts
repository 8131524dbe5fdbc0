/**
 * The batch transactions a usage consumer has open, for the billing worker's stall watchdog.
 * Each counts from before its BEGIN until it has committed or rolled back, the claim included:
 * a connection that stopped answering hangs whichever statement comes next, as often the BEGIN
 * or the claim of the next batch as a statement of applying one.
 */
export interface BatchesInFlight {
  /** Runs `transaction`, counting it in flight until it settles. */
  run<T>(transaction: () => Promise<T>): Promise<T>;
  /** When the oldest of those still open began; null when none is. */
  oldestSince(): Date | null;
}

export function createBatchesInFlight(): BatchesInFlight {
  // A Set iterates in insertion order: the first entry left is the oldest still open.
  const open = new Set<{ since: Date }>();
  return {
    async run(transaction) {
      const entry = { since: new Date() };
      open.add(entry);
      try {
        return await transaction();
      } finally {
        open.delete(entry);
      }
    },
    oldestSince() {
      for (const entry of open) return entry.since;
      return null;
    },
  };
}
