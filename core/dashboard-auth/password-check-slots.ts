import { availableParallelism } from 'node:os';

// A password check is scrypt with N=2^15, r=8: 32 MB and 100–200 ms of one core, and anyone may
// ask for one (an unknown e-mail costs the same, on purpose). Unbounded, a flood of sign-ins
// takes every core, and the API served by the same process with them. So a process runs a few
// at a time, lets a few more wait their turn, and turns the rest away at once.

export interface PasswordCheckBounds {
  /** Checks running at once. */
  running: number;
  /** Checks waiting for a turn; one more is turned away without waiting. */
  queued: number;
  /** A check that waited this long without a turn is given up. */
  maxWaitMs: number;
  /** Checks one client address may have running or waiting: one address cannot fill the queue. */
  perAddress: number;
}

/**
 * One core fewer than the machine has (at least one): the event loop, Postgres on the same box
 * and the API in the `npm start` process keep a core, and scrypt never takes all four of
 * libuv's threads, which file reads and compression also need. On 2 cores: one at a time.
 * Sixteen waiting per running check is ~2.5 s of queue at 150 ms a check; a box slowed down
 * by other work gives up at 5 s rather than holding the visitor longer. Four per address leaves
 * room for an office behind one NAT, and a flood from one address leaves the rest of the queue
 * to everyone else (one from many addresses still fills it: then everyone waits a few seconds,
 * which is the point, the CPU stays with the API).
 */
export function defaultPasswordCheckBounds(cores = availableParallelism()): PasswordCheckBounds {
  const running = Math.max(1, cores - 1);
  return { running, queued: 16 * running, maxWaitMs: 5_000, perAddress: 4 };
}

export type SlotOutcome<T> = { ran: true; value: T } | { ran: false };

export interface PasswordCheckSlots {
  /**
   * Runs `check` in a slot, after waiting for one if need be; `{ ran: false }` when there was
   * none, or `address` (the client's; null when unknown, then not limited) has its share.
   */
  run<T>(check: () => Promise<T>, address?: string | null): Promise<SlotOutcome<T>>;
  /** False when a check asked for now would be turned away. */
  hasRoom(address?: string | null): boolean;
  /** Seconds to tell a visitor who was turned away (Retry-After). */
  readonly retryAfterSeconds: number;
  /** Checks running now, and the most that ever ran at once. */
  readonly running: number;
  readonly peakRunning: number;
}

/** The slots of one process: build one in its composition root and share it. */
export function passwordCheckSlots(bounds: PasswordCheckBounds = defaultPasswordCheckBounds()): PasswordCheckSlots {
  if (bounds.running < 1 || bounds.queued < 0 || bounds.perAddress < 1) throw new RangeError('password checks need at least one slot, one per address and a queue of zero or more');
  let running = 0;
  let peakRunning = 0;
  const waiting: { admit: () => void }[] = [];
  const ofAddress = new Map<string, number>();
  const addressHasRoom = (address: string | null | undefined) => !address || (ofAddress.get(address) ?? 0) < bounds.perAddress;
  const countAddress = (address: string | null | undefined, by: 1 | -1) => {
    if (!address) return;
    const n = (ofAddress.get(address) ?? 0) + by;
    if (n > 0) ofAddress.set(address, n);
    else ofAddress.delete(address);
  };

  // A finished check hands its slot straight to the longest waiter, so `running` never dips and
  // a newcomer cannot overtake someone who queued.
  const release = () => {
    const next = waiting.shift();
    if (next) next.admit();
    else running -= 1;
  };

  const waitForTurn = () =>
    new Promise<boolean>((resolve) => {
      const entry = {
        admit: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      const timer = setTimeout(() => {
        waiting.splice(waiting.indexOf(entry), 1);
        resolve(false);
      }, bounds.maxWaitMs);
      waiting.push(entry);
    });

  return {
    async run<T>(check: () => Promise<T>, address?: string | null): Promise<SlotOutcome<T>> {
      if (!addressHasRoom(address)) return { ran: false };
      countAddress(address, 1);
      try {
        if (running < bounds.running) running += 1;
        else if (waiting.length >= bounds.queued || !(await waitForTurn())) return { ran: false };
        peakRunning = Math.max(peakRunning, running);
        try {
          return { ran: true, value: await check() };
        } finally {
          release();
        }
      } finally {
        countAddress(address, -1);
      }
    },
    hasRoom: (address) => addressHasRoom(address) && (running < bounds.running || waiting.length < bounds.queued),
    retryAfterSeconds: Math.max(1, Math.ceil(bounds.maxWaitMs / 1000)),
    get running() {
      return running;
    },
    get peakRunning() {
      return peakRunning;
    },
  };
}
