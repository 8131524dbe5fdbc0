/**
 * `work`, or a rejection with `late()` once `ms` have passed without it settling. The work goes
 * on (nothing here can stop a query or a socket); the caller decides what a late answer means:
 * a lookup refused, a connection counted lost. The timer is cleared either way, so it never holds
 * the process open.
 */
export function withinDeadline<T>(ms: number, work: Promise<T>, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(late()), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}
