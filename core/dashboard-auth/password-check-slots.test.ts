import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defaultPasswordCheckBounds, passwordCheckSlots } from './password-check-slots.js';

// A check that finishes when the test says so.
function pendingCheck<T>(value: T) {
  let finish!: () => void;
  const done = new Promise<T>((resolve) => {
    finish = () => resolve(value);
  });
  return { check: () => done, finish };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('when more checks are asked for than there are slots', () => {
  it('then only `running` run at once, the waiters run in the order they came, and the peak says so', async () => {
    const slots = passwordCheckSlots({ running: 2, queued: 10, maxWaitMs: 5_000, perAddress: 10 });
    const checks = Array.from({ length: 5 }, (_, i) => pendingCheck(i));
    const started: number[] = [];
    const outcomes = checks.map((c, i) => slots.run(() => (started.push(i), c.check())));
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([0, 1]);
    expect(slots.running).toBe(2);
    checks[1]!.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([0, 1, 2]);
    checks[0]!.finish();
    checks[2]!.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    checks[3]!.finish();
    checks[4]!.finish();
    expect(await Promise.all(outcomes)).toEqual([0, 1, 2, 3, 4].map((value) => ({ ran: true, value })));
    expect(slots.running).toBe(0);
    expect(slots.peakRunning).toBe(2);
  });

  it('then one past a full queue is turned away at once, without running', async () => {
    const slots = passwordCheckSlots({ running: 1, queued: 2, maxWaitMs: 5_000, perAddress: 10 });
    const first = pendingCheck('a');
    const running = slots.run(first.check);
    const queued = [slots.run(async () => 'b'), slots.run(async () => 'c')];
    expect(slots.hasRoom()).toBe(false);
    const extra = vi.fn(async () => 'd');
    await expect(slots.run(extra)).resolves.toEqual({ ran: false });
    expect(extra).not.toHaveBeenCalled();
    first.finish();
    expect(await running).toEqual({ ran: true, value: 'a' });
    expect(await Promise.all(queued)).toEqual([{ ran: true, value: 'b' }, { ran: true, value: 'c' }]);
    expect(slots.hasRoom()).toBe(true);
  });

  it('then a waiter not admitted within maxWaitMs gives up, and leaves its place to the next', async () => {
    const slots = passwordCheckSlots({ running: 1, queued: 1, maxWaitMs: 5_000, perAddress: 10 });
    const first = pendingCheck('a');
    void slots.run(first.check);
    const late = vi.fn(async () => 'late');
    const waiting = slots.run(late);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(slots.hasRoom()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(waiting).resolves.toEqual({ ran: false });
    expect(late).not.toHaveBeenCalled();
    expect(slots.hasRoom()).toBe(true);
    first.finish();
    await vi.advanceTimersByTimeAsync(0);
    expect(slots.running).toBe(0);
    expect(slots.retryAfterSeconds).toBe(5);
  });
});

describe('when one client address asks for more checks than its share', () => {
  it('then the ones past its share are turned away, other addresses still get places, and the share comes back as its checks end', async () => {
    const slots = passwordCheckSlots({ running: 1, queued: 10, maxWaitMs: 5_000, perAddress: 2 });
    const first = pendingCheck('a1');
    const flooding = [slots.run(first.check, '203.0.113.7'), slots.run(async () => 'a2', '203.0.113.7')];
    expect(slots.hasRoom('203.0.113.7')).toBe(false);
    await expect(slots.run(async () => 'a3', '203.0.113.7')).resolves.toEqual({ ran: false });
    expect(slots.hasRoom('198.51.100.1')).toBe(true);
    const other = slots.run(async () => 'b', '198.51.100.1');
    // Unknown addresses are not limited by address.
    const unknown = slots.run(async () => 'c', null);
    first.finish();
    expect(await Promise.all([...flooding, other, unknown])).toEqual(['a1', 'a2', 'b', 'c'].map((value) => ({ ran: true, value })));
    expect(slots.hasRoom('203.0.113.7')).toBe(true);
  });

  it('then a waiter that gave up gives its share back', async () => {
    const slots = passwordCheckSlots({ running: 1, queued: 5, maxWaitMs: 1_000, perAddress: 1 });
    const first = pendingCheck('a');
    void slots.run(first.check, '198.51.100.1');
    const gaveUp = slots.run(async () => 'late', '203.0.113.7');
    expect(slots.hasRoom('203.0.113.7')).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(gaveUp).resolves.toEqual({ ran: false });
    expect(slots.hasRoom('203.0.113.7')).toBe(true);
    first.finish();
  });
});

describe('when a check throws', () => {
  it('then its slot is freed for the next', async () => {
    const slots = passwordCheckSlots({ running: 1, queued: 1, maxWaitMs: 5_000, perAddress: 10 });
    const failing = slots.run(async () => {
      throw new Error('scrypt failed');
    });
    const next = slots.run(async () => 'next');
    await expect(failing).rejects.toThrow('scrypt failed');
    await expect(next).resolves.toEqual({ ran: true, value: 'next' });
    expect(slots.running).toBe(0);
  });
});

describe('when the bounds come from the machine', () => {
  it('then one core is left for the rest, and a one- or two-core machine checks one at a time', () => {
    expect(defaultPasswordCheckBounds(1).running).toBe(1);
    expect(defaultPasswordCheckBounds(2)).toEqual({ running: 1, queued: 16, maxWaitMs: 5_000, perAddress: 4 });
    expect(defaultPasswordCheckBounds(8).running).toBe(7);
  });
});
