import { describe, expect, it } from 'vitest';
import { createCompanyCache, type CompanyStore } from '../core/companies/index.js';
import { jsonWithCachedParts } from './cached-json.js';

// The spliced text must be exactly JSON.stringify's: clients may compare the text copy of a
// tool result with structuredContent, and the response body is parsed by every client.

const profile = { id: '1', identity: { legalName: 'Rossi "&" Figli S.r.l.', vat: null }, latestYear: { year: 2024, revenue: 1_234_567 }, peers: [{ id: '2' }] };
const fakeStore = { companyProfile: async () => structuredClone(profile) } as unknown as CompanyStore;

describe('jsonWithCachedParts', () => {
  it('when a result holds a value of the company cache then its cached text is spliced in and the whole equals JSON.stringify', async () => {
    const cache = createCompanyCache({ store: fakeStore });
    const cached = (await cache.companyProfile('ABC'))!;
    // A different text under the same object proves the cached text is what gets used.
    const marker = (value: unknown) => (value === cached ? cache.serialised(value)!.replace('Rossi', 'ROSSI') : undefined);
    const response = { result: { _meta: { requestId: 'req_1' }, content: [{ type: 'text', text: 'x' }], structuredContent: { profile: cached, risk: { flagged: [] } } }, jsonrpc: '2.0', id: 7 };
    expect(jsonWithCachedParts(response, cache.serialised, 4)).toBe(JSON.stringify(response));
    expect(jsonWithCachedParts(response, marker, 4)).toContain('ROSSI');
    expect(jsonWithCachedParts(response, marker, 2)).not.toContain('ROSSI'); // deeper than asked: stringified whole
  });

  it('when values are undefined, functions, arrays, dates or nested nulls then the text still equals JSON.stringify', () => {
    const value = { a: undefined, b: () => 1, c: [1, undefined, 'x'], d: new Date(0), e: { f: null, g: { h: 'é\n"' } }, 'k"ey': true };
    expect(jsonWithCachedParts(value, () => undefined, 5)).toBe(JSON.stringify(value));
    expect(jsonWithCachedParts({}, undefined, 1)).toBe('{}');
    expect(jsonWithCachedParts('text', undefined, 1)).toBe('"text"');
  });
});
