import { describe, expect, it, vi } from 'vitest';
import { createBatchPublisher, type WriteDeadline } from './batch-publisher.js';

describe('batch publisher', () => {
  it('when many publishes arrive at once then they are written in a few batches and each resolves only after its own batch is written', async () => {
    const written: number[][] = [];
    let release!: () => void;
    const firstWrite = new Promise<void>((r) => (release = r));
    const publisher = createBatchPublisher<number>(async (items) => {
      if (written.length === 0) await firstWrite; // hold the first batch while others queue up
      written.push(items);
    }, { maxBatch: 40, lingerMs: 1 });
    const settled: number[] = [];
    const all = Array.from({ length: 100 }, (_, i) => publisher.add(i).then(() => settled.push(i)));
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toEqual([]); // nothing acknowledged while the first write hangs
    release();
    await Promise.all(all);
    expect(written.map((b) => b.length)).toEqual([40, 40, 20]);
    expect(written.flat()).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });

  it('when a write fails then exactly that batch is refused and the next batch is still written', async () => {
    let calls = 0;
    const publisher = createBatchPublisher<number>(async () => {
      calls += 1;
      if (calls === 1) throw new Error('broker gone');
    }, { maxBatch: 3, lingerMs: 1 });
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => publisher.add(i)));
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
  });
});

describe('batch publisher with several batches in flight', () => {
  it('when one batch hangs then the next is written meanwhile and each caller settles with its own batch', async () => {
    const written: number[][] = [];
    let release!: () => void;
    const firstWrite = new Promise<void>((r) => (release = r));
    let writes = 0;
    const publisher = createBatchPublisher<number>(async (items) => {
      writes += 1;
      if (writes === 1) await firstWrite; // the first batch hangs
      written.push(items);
    }, { maxBatch: 2, lingerMs: 1, maxInFlight: 2 });
    const settled: number[] = [];
    const first = [1, 2].map((i) => publisher.add(i).then(() => settled.push(i)));
    const second = [3, 4].map((i) => publisher.add(i).then(() => settled.push(i)));
    await Promise.all(second);
    expect(settled).toEqual([3, 4]); // not held back behind the hanging batch
    expect(written).toEqual([[3, 4]]);
    const third = publisher.add(5); // one slot is still free, so it goes too
    await third;
    release();
    await Promise.all(first);
    await publisher.drain();
    expect(written).toEqual([[3, 4], [5], [1, 2]]);
  });
});

describe('batch publisher with a deadline', () => {
  // A sweep every 10 ms (a quarter of 40).
  const refusal = new Error('refused at the deadline');
  const setup = (write: (items: number[], deadline?: WriteDeadline) => Promise<void>) => {
    const late: number[][] = [];
    const refusedWriting: number[][] = [];
    const publisher = createBatchPublisher<number>(write, {
      maxBatch: 2, lingerMs: 1,
      deadline: { ms: 40, refusal: () => refusal, refusedWhileWriting: (items) => refusedWriting.push(items), landedAfterRefusal: (items) => late.push(items) },
    });
    return { publisher, late, refusedWriting };
  };
  const outcome = (p: Promise<void>) => p.then(() => 'written', (err: unknown) => (err === refusal ? 'refused' : (err as Error).message));
  const hang = (deadline?: WriteDeadline) => new Promise<void>((_, reject) => deadline?.onPass(() => reject(new Error('cancelled'))));

  it('when the write hangs and is cancelled at the deadline, then its callers get the cancel\'s failure, those queued behind it are refused unwritten, and all within the deadline and two sweeps', async () => {
    const written: number[][] = [];
    const { publisher, late } = setup(async (items, deadline) => {
      written.push(items);
      await hang(deadline);
    });
    // The clock in the test's hands: the three are added in one millisecond, as the case needs
    // (with real time, 3 could be a millisecond younger, miss the first sweep, and be written).
    vi.useFakeTimers();
    try {
      const results: string[] = [];
      const settled = Promise.all([1, 2, 3].map((i) => outcome(publisher.add(i)).then((r) => void (results[i - 1] = r))));
      // The deadline and two sweeps.
      await vi.advanceTimersByTimeAsync(40 + 2 * 10);
      expect(results).toEqual(['cancelled', 'cancelled', 'refused']);
      await settled;
      expect(written).toEqual([[1, 2]]); // 3 was never written
      expect(late).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });

  it('when the write ignores the cancel and lands a sweep after it, then its callers were refused and the landing is reported with its items', async () => {
    let land!: () => void;
    const { publisher, late, refusedWriting } = setup(() => new Promise<void>((resolve) => (land = resolve)));
    expect(await Promise.all([1, 2].map((i) => outcome(publisher.add(i))))).toEqual(['refused', 'refused']);
    expect(refusedWriting).toEqual([[1, 2]]); // said at the refusal, before the write lands
    expect(late).toEqual([]);
    land();
    await publisher.drain();
    expect(late).toEqual([[1, 2]]);
  });

  it('when the write lands after the cancel was asked but before the next sweep, then its callers are served', async () => {
    const { publisher, late } = setup((_, deadline) => new Promise<void>((resolve) => deadline?.onPass(() => resolve())));
    expect(await Promise.all([1, 2].map((i) => outcome(publisher.add(i))))).toEqual(['written', 'written']);
    expect(late).toEqual([]);
  });
});
