import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createConsumerWaker } from './consumer-waker.js';

describe('consumer waker', () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  const make = (notify: () => Promise<void> = async () => {}) => {
    const sent: number[] = [];
    const errors: unknown[] = [];
    const waker = createConsumerWaker({
      notify: async () => {
        sent.push(Date.now());
        await notify();
      },
      intervalMs: 10,
      onError: (err) => errors.push(err),
    });
    return { waker, sent, errors };
  };

  it('when a batch lands after a quiet spell then the consumers are woken at once', () => {
    const { waker, sent } = make();
    waker.batchLanded();
    expect(sent).toEqual([1_000_000]);
  });

  it('when batches land in quick succession then one wake-up per interval goes, and one follows the last batch', async () => {
    const { waker, sent } = make();
    for (let ms = 0; ms < 25; ms += 1) {
      waker.batchLanded();
      await vi.advanceTimersByTimeAsync(1);
    }
    // Batches at 0..24 ms: woken at 0, 10 and 20; the batches after 20 ms are covered by the
    // trailing wake-up at 30 ms.
    await vi.advanceTimersByTimeAsync(10);
    expect(sent.map((t) => t - 1_000_000)).toEqual([0, 10, 20, 30]);
    await vi.advanceTimersByTimeAsync(100);
    expect(sent).toHaveLength(4); // nothing landed since: no more wake-ups
  });

  it('when closed with a wake-up still due then it is sent before close resolves', async () => {
    let finished = false;
    const { waker, sent } = make(async () => {
      await new Promise((r) => setTimeout(r, 5));
      finished = true;
    });
    waker.batchLanded();
    waker.batchLanded(); // within the interval: due at +10 ms
    expect(sent).toHaveLength(1);
    const closed = waker.close();
    expect(sent).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(5);
    await closed;
    expect(finished).toBe(true);
  });

  it('when a wake-up fails then it is reported and the next batch wakes the consumers again', async () => {
    let fail = true;
    const { waker, sent, errors } = make(async () => {
      if (fail) throw new Error('connection lost');
    });
    waker.batchLanded();
    await vi.advanceTimersByTimeAsync(0);
    expect(errors).toHaveLength(1);
    fail = false;
    await vi.advanceTimersByTimeAsync(10);
    waker.batchLanded();
    await vi.advanceTimersByTimeAsync(0);
    expect(sent).toHaveLength(2);
    expect(errors).toHaveLength(1);
  });
});
