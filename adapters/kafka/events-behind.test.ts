import { describe, expect, it } from 'vitest';
import { eventsBehind } from './kafka-usage-consumer.js';

// The worker's /healthz `backlog.events`, from the topic's end offsets and the group's committed
// offsets as kafkajs's admin client returns them (strings; -1 where the group committed nothing).
describe('eventsBehind', () => {
  it('when the group has committed on some partitions then each counts from its commit, the others from their low offset', () => {
    const ends = [
      { partition: 0, high: '120', low: '0' },
      { partition: 1, high: '50', low: '10' },
    ];
    expect(eventsBehind(ends, [{ partition: 0, offset: '100' }, { partition: 1, offset: '-1' }])).toBe(20 + 40);
  });

  it('when a commit was read past an end read a moment earlier (the reads go side by side) then that partition counts 0, not less, and the others still count', () => {
    const ends = [
      { partition: 0, high: '100', low: '0' },
      { partition: 1, high: '30', low: '0' },
    ];
    expect(eventsBehind(ends, [{ partition: 0, offset: '120' }, { partition: 1, offset: '25' }])).toBe(5);
  });
});
