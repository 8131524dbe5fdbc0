import { describe, expect, it } from 'vitest';
import { systemReason, systemReasonPattern } from './system-reasons.js';

describe('system reasons', () => {
  it('when each is written then its own pattern reads its values back', () => {
    const written: [keyof typeof systemReason, string, Record<string, string | undefined>][] = [
      ['includedCredits', systemReason.includedCredits('standard', '2026-11'), { plan: 'standard', period: '2026-11' }],
      ['rollover', systemReason.rollover(5000), { credits: '5000' }],
      ['capChange', systemReason.capChange(null, 10, true, 'trial: month one'), { from: 'none', to: '10', thisPeriod: ' (this period only)', why: 'trial: month one' }],
      ['capChange', systemReason.capChange(10, null, false, 'signed'), { from: '10', to: 'none', thisPeriod: undefined, why: 'signed' }],
      ['planCap', systemReason.planCap('standard'), { plan: 'standard' }],
      ['planChanged', systemReason.planChanged('standard', 'pro'), { from: 'standard', to: 'pro' }],
      ['planCapAgain', systemReason.planCapAgain('standard', 'deal ended: back to list'), { plan: 'standard', why: 'deal ended: back to list' }],
      ['rolloverCap', systemReason.rolloverCap('2026-12', 'own'), { period: '2026-12', own: "the organization's own cap", plan: undefined, noPlan: undefined }],
      ['rolloverCap', systemReason.rolloverCap('2026-12', { plan: 'standard' }), { period: '2026-12', own: undefined, plan: 'standard', noPlan: undefined }],
      ['rolloverCap', systemReason.rolloverCap('2026-12', { plan: null }), { period: '2026-12', own: undefined, plan: undefined, noPlan: 'no plan' }],
      ['refusedCall', systemReason.refusedCall(5, 'credits', 'company-financials'), { quantity: '5', unit: 'credits', product: 'company-financials' }],
      ['refusedCall', systemReason.refusedCall(1, 'calls', 'odd, not charged\nproduct'), { quantity: '1', unit: 'calls', product: 'odd, not charged\nproduct' }],
      ['refusedCallRefund', systemReason.refusedCallRefund(), {}],
      ['usage', systemReason.usage(), {}],
      ['periodRollover', systemReason.periodRollover('2026-12'), { period: '2026-12' }],
      ['productChanged', systemReason.productChanged('company-report'), { product: 'company-report' }],
      ['productReset', systemReason.productReset('company-report'), { product: 'company-report' }],
    ];
    for (const [kind, text, groups] of written) expect({ ...systemReasonPattern[kind].exec(text)?.groups }, text).toEqual(groups);
    expect(new Set(written.map(([kind]) => kind))).toEqual(new Set(Object.keys(systemReason)));
    // A refused call's row as record-refused-calls.ts wrote it before systemReason had it: read the same.
    expect({ ...systemReasonPattern.refusedCall.exec('call refused (503) before its usage event was confirmed: 5 credits for company-financials, not charged')?.groups })
      .toEqual({ quantity: '5', unit: 'credits', product: 'company-financials' });
  });
});
