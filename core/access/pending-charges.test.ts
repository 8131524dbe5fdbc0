import { describe, expect, it } from 'vitest';
import { createPendingCharges } from './pending-charges.js';

// Unapplied calls are forgotten once applied, and in any case after maxAgeMs, even for an
// organization that stopped calling (whose state is never read again to settle them).
describe('pending charges', () => {
  const credits = (quantity: number) => ({ quantity, unit: 'credits' as const });

  it('when events are applied then settle forgets exactly those', () => {
    const pending = createPendingCharges({ maxAgeMs: 60_000 });
    pending.add('org_a', 'req_1', credits(5), 0);
    pending.add('org_a', 'req_2', { quantity: 1, unit: 'calls' }, 0);
    pending.add('org_a', 'req_2', { quantity: 1, unit: 'calls' }, 0); // the same event again: once
    expect(pending.totals('org_a')).toMatchObject({ credits: 5, calls: 1 });
    pending.settle('org_a', new Set(['req_1', 'req_elsewhere']), 1_000);
    expect(pending.totals('org_a')).toMatchObject({ credits: 0, calls: 1 });
    expect(pending.eventIds('org_a')).toEqual(['req_2']);
  });

  it('when an organization stops calling then the sweep forgets its events after maxAgeMs, and leaves younger ones', () => {
    const pending = createPendingCharges({ maxAgeMs: 60_000 });
    pending.add('org_idle', 'req_old', credits(5), 0);
    pending.add('org_busy', 'req_young', credits(3), 50_000);
    pending.sweep(59_999);
    expect(pending.eventIds('org_idle')).toEqual(['req_old']);
    pending.sweep(60_000);
    expect(pending.eventIds('org_idle')).toEqual([]);
    expect(pending.totals('org_idle')).toMatchObject({ credits: 0, calls: 0 });
    expect(pending.eventIds('org_busy')).toEqual(['req_young']);
  });

  it('when an organization adds an event then its expired ones go first', () => {
    const pending = createPendingCharges({ maxAgeMs: 1_000 });
    pending.add('org_a', 'req_1', credits(5), 0);
    pending.add('org_a', 'req_2', credits(2), 1_000);
    expect(pending.eventIds('org_a')).toEqual(['req_2']);
    expect(pending.totals('org_a')).toMatchObject({ credits: 2 });
  });
});
