import { describe, expect, it } from 'vitest';
import { parseUsageMessage } from './parse-usage-message.js';

const event = {
  v: 1,
  eventId: 'req_6f1c2b1e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
  organizationId: 'org_test',
  keyId: 'key_test',
  source: 'api',
  product: 'company-financials',
  quantity: 5,
  unit: 'credits',
  occurredAt: '2026-11-30T23:30:00.123456Z',
};

describe('parseUsageMessage', () => {
  it('when the time is UTC then it is kept exactly as written', () => {
    expect(parseUsageMessage(Buffer.from(JSON.stringify(event)))).toEqual({ ok: true, event });
  });

  it('when the time has digits past the microsecond then they are dropped, not rounded: 23:59:59.9999995 on a month\'s last day stays in that day and month, as Postgres stores it', () => {
    const parsed = parseUsageMessage({ ...event, occurredAt: '2026-11-30T23:59:59.9999995Z' });
    expect(parsed).toEqual({ ok: true, event: { ...event, occurredAt: '2026-11-30T23:59:59.999999Z' } });
  });

  it('when the time has an offset then it is the same instant in UTC, in the month UTC puts it in', () => {
    const parsed = parseUsageMessage({ ...event, occurredAt: '2026-12-01T00:30:00+01:00' });
    expect(parsed).toEqual({ ok: true, event: { ...event, occurredAt: '2026-11-30T23:30:00.000Z' } });
  });

  it('when a text field holds a NUL then the reason names the field', () => {
    const parsed = parseUsageMessage(JSON.stringify({ ...event, keyId: 'key_\u0000' }));
    expect(parsed).toEqual({ ok: false, reason: 'invalid usage event: keyId: must not contain the NUL character (U+0000)' });
  });

  it('when the bytes are not JSON or not an event then each has its reason', () => {
    expect(parseUsageMessage(Buffer.from('nope'))).toEqual({ ok: false, reason: 'not JSON' });
    expect(parseUsageMessage(null)).toEqual({ ok: false, reason: 'empty message (tombstone)' });
    expect(parseUsageMessage({ ...event, occurredAt: '30/11/2026' })).toMatchObject({ ok: false, reason: expect.stringMatching(/^invalid usage event: occurredAt: /) });
  });
});
