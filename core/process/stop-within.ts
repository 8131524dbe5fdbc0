import type { Logger } from '../logging/index.js';

/**
 * How long one step of a process's stop (draining a port, closing a pool) may take. A pool's
 * close waits for every connection's goodbye from the server: when the server's packets are
 * silently dropped (a NAT or conntrack entry reset, a failover that moved the address) that
 * answer never comes, and a stop awaited without a deadline kept a worker alive for ten minutes
 * after its last line, until it was killed.
 */
export const STOP_STEP_MS = 5_000;

/**
 * Runs one step of a stop; resolves true once it has finished, or false after `ms`, having said
 * in one warn line what did not close in time. The step is not cancelled: the caller goes on and
 * exits, and the process's end closes whatever the step still held. A step that fails rejects,
 * as it would have.
 */
export async function stopWithin(logger: Logger, what: string, step: () => Promise<void>, ms = STOP_STEP_MS): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    const finished = await Promise.race([step().then(() => true as const), late]);
    if (!finished) logger.warn(`${what} did not close within ${ms / 1000} s (a connection that stopped answering, most likely); going on without it`, { step: what, waitedMs: ms });
    return finished;
  } finally {
    clearTimeout(timer);
  }
}
