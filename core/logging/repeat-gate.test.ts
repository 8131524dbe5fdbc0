import { describe, expect, it } from 'vitest';
import { createRepeatGate } from './repeat-gate.js';

describe('repeat gate', () => {
  it('when a kind of line repeats then it is said once per period, each time with how many were held back, and other kinds are said apart', () => {
    let clock = 0;
    const gate = createRepeatGate(10_000, () => clock);
    expect(gate('entitlement_unavailable')).toEqual({ say: true, heldBack: 0 });
    for (let i = 0; i < 5; i++) expect(gate('entitlement_unavailable')).toEqual({ say: false });
    expect(gate('upstream_timeout')).toEqual({ say: true, heldBack: 0 });
    clock = 9_999;
    expect(gate('entitlement_unavailable')).toEqual({ say: false });
    clock = 10_000;
    expect(gate('entitlement_unavailable')).toEqual({ say: true, heldBack: 6 });
    clock = 30_000;
    expect(gate('entitlement_unavailable')).toEqual({ say: true, heldBack: 0 });
  });
});
