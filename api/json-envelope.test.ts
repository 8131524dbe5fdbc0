import { describe, expect, it } from 'vitest';
import { endpointCatalogue, usageSchema } from '../core/companies/endpoint-catalogue.js';
import { newRequestId } from '../core/ids/index.js';
import { successEnvelopeJson } from './json-envelope.js';

describe('success envelope text', () => {
  it('when the data text is spliced in then the body is exactly JSON.stringify of { data, meta }', () => {
    const data = { fiscalCode: '01234567890', name: 'Caffè «Roma» "S.r.l."', years: [{ year: 2024, revenue: 1_200_000, margin: null }], nested: { a: [], b: {} } };
    const meta = { requestId: 'req_5f0c2a52-6a1e-4c7b-9d0e-3d9f4b1b2c3a', endpoint: 'company-financials', usage: { quantity: 2, unit: 'credits' as const } };
    const body = successEnvelopeJson(JSON.stringify(data), meta);
    expect(body).toBe(JSON.stringify({ data, meta }));
    expect(JSON.parse(body)).toEqual({ data, meta });
  });

  it('when meta is any endpoint of the catalogue with either unit and any quantity then its text is JSON.stringify\'s', () => {
    for (const { slug } of endpointCatalogue) {
      for (const unit of usageSchema.shape.unit.options) {
        for (const quantity of [0, 1, 25, 1_000_000]) {
          const meta = { requestId: newRequestId(), endpoint: slug, usage: { quantity, unit } };
          expect(successEnvelopeJson('{}', meta)).toBe(JSON.stringify({ data: {}, meta }));
        }
      }
    }
  });
});
