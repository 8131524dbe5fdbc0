import { afterEach, describe, expect, it } from 'vitest';
import { createInMemoryRateLimiter } from './in-memory-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

describe('in-process rate limiter', () => {
  let limiter: RateLimiter;
  let clock = 0;
  const make = (start: number) => {
    clock = start;
    limiter = createInMemoryRateLimiter({ now: () => clock });
    return limiter;
  };
  afterEach(() => limiter.close());

  it('when the burst is spent then the next call is refused with Retry-After of at least 1 s', async () => {
    const l = make(1_000_000 * 60_000 + 1_000);
    const limits = { perSecond: 2, burst: 5, perMinute: 100 };
    const results = [];
    for (let i = 0; i < 6; i++) results.push(await l.consume('org_a', limits));
    expect(results.slice(0, 5).every((r) => r.allowed)).toBe(true);
    expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    expect(results[4]!.limit).toBe(5);
    const refused = results[5]!;
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterSeconds).toBe(1);
  });

  it('when time passes then tokens refill at the per-second rate', async () => {
    const l = make(1_000_000 * 60_000 + 1_000);
    const limits = { perSecond: 2, burst: 2, perMinute: 100 };
    await l.consume('org_b', limits);
    await l.consume('org_b', limits);
    expect((await l.consume('org_b', limits)).allowed).toBe(false);
    clock += 500; // one token back
    expect((await l.consume('org_b', limits)).allowed).toBe(true);
    expect((await l.consume('org_b', limits)).allowed).toBe(false);
  });

  it('when the minute cap is reached then calls are refused until the next clock minute', async () => {
    const minuteStart = 1_000_000 * 60_000;
    const l = make(minuteStart + 50_000);
    const limits = { perSecond: 1000, burst: 1000, perMinute: 3 };
    for (let i = 0; i < 3; i++) expect((await l.consume('org_c', limits)).allowed).toBe(true);
    const refused = await l.consume('org_c', limits);
    expect(refused.allowed).toBe(false);
    expect(refused.limit).toBe(3);
    expect(refused.remaining).toBe(0);
    expect(refused.retryAfterSeconds).toBe(10);
    expect(refused.resetSeconds).toBe(10);
    clock = minuteStart + 60_000;
    expect((await l.consume('org_c', limits)).allowed).toBe(true);
  });

  it('when one limit refuses then the other is not consumed', async () => {
    const l = make(1_000_000 * 60_000);
    const limits = { perSecond: 1, burst: 1, perMinute: 2 };
    expect((await l.consume('org_d', limits)).allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect((await l.consume('org_d', limits)).allowed).toBe(false); // bucket refuses
    clock += 1_000;
    expect((await l.consume('org_d', limits)).allowed).toBe(true); // minute count is only 2 now
  });

  it('when two organizations call then each has its own limits', async () => {
    const l = make(1_000_000 * 60_000);
    const limits = { perSecond: 1, burst: 1, perMinute: 10 };
    expect((await l.consume('org_e', limits)).allowed).toBe(true);
    expect((await l.consume('org_f', limits)).allowed).toBe(true);
    expect((await l.consume('org_e', limits)).allowed).toBe(false);
  });
});
