/**
 * For a line that can repeat on every request during an outage (a dependency's 5xx): it is
 * said for the first of its kind, then at most once per `everyMs`, with how many were held back
 * since. The access log still has every request, with its error code.
 */
export type RepeatGate = (kind: string) => { say: false } | { say: true; heldBack: number };

export function createRepeatGate(everyMs = 10_000, now: () => number = Date.now): RepeatGate {
  const kinds = new Map<string, { saidAt: number; heldBack: number }>();
  return (kind) => {
    const at = now();
    const seen = kinds.get(kind);
    if (seen && at - seen.saidAt < everyMs) {
      seen.heldBack += 1;
      return { say: false };
    }
    kinds.set(kind, { saidAt: at, heldBack: 0 });
    return { say: true, heldBack: seen?.heldBack ?? 0 };
  };
}
