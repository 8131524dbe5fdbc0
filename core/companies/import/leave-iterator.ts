/**
 * Ends an async iterator left early. With no read pending it is closed now. With one pending (a
 * quiet pipe may not answer for minutes) it is left to close when that read ends: an async
 * generator's return() waits behind its pending next(), so awaiting it would hold the caller
 * on that read.
 */
export async function leaveIterator<T>(items: AsyncIterator<T>, pending: Promise<IteratorResult<T>> | null): Promise<void> {
  if (pending === null) {
    await items.return?.();
    return;
  }
  pending.catch(() => undefined);
  items.return?.().catch(() => undefined);
}
