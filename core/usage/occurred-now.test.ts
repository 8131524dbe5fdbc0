import { afterEach, describe, expect, it, vi } from 'vitest';
import { occurredNow } from './occurred-now.js';

describe('occurredNow', () => {
  afterEach(() => vi.useRealTimers());

  it('is the current time in ISO 8601 with milliseconds, and follows the clock from one millisecond to the next', () => {
    vi.useFakeTimers({ now: Date.parse('2026-11-26T10:00:00.123Z') });
    expect(occurredNow()).toBe('2026-11-26T10:00:00.123Z');
    expect(occurredNow()).toBe('2026-11-26T10:00:00.123Z');
    vi.setSystemTime(Date.parse('2026-11-26T10:00:00.124Z'));
    expect(occurredNow()).toBe('2026-11-26T10:00:00.124Z');
    vi.setSystemTime(Date.parse('2027-01-01T00:00:00.000Z'));
    expect(occurredNow()).toBe('2027-01-01T00:00:00.000Z');
  });
});
