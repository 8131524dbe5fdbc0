// How many dead letters are unresolved (usage served and not billed), for /healthz: what an SRE
// alerts on, where before only a log line and the operators' overview said so. One COUNT per
// `ttlMs` at most, whatever the probe rate (compose checks every 10 s, a load balancer or a
// scraper far more often, and every replica reads the same table): probes meanwhile get the
// last count; probes that come while one is read share it. A failed read is not kept.

const TTL_MS = 5_000;

export function cachedCount(read: () => Promise<number>, ttlMs = TTL_MS, now: () => number = Date.now): () => Promise<number> {
  let kept: { value: number; readAt: number } | null = null;
  let reading: Promise<number> | null = null;
  return () => {
    if (kept && now() - kept.readAt < ttlMs) return Promise.resolve(kept.value);
    reading ??= read().then(
      (value) => {
        kept = { value, readAt: now() };
        reading = null;
        return value;
      },
      (err: unknown) => {
        reading = null;
        throw err;
      },
    );
    return reading;
  };
}
