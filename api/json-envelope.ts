import type { Meta } from '../core/companies/endpoint-catalogue.js';

/**
 * The success envelope `{ data, meta }` as JSON text, byte for byte what
 * `JSON.stringify({ data, meta })` gives, with `data`'s text supplied by the caller: a cached
 * answer's text is made once (core/companies/company-cache.ts), so a hit costs a string
 * concatenation instead of walking a 2–50 KB object on every response.
 */
export function successEnvelopeJson(dataJson: string, meta: Meta): string {
  return `{"data":${dataJson},"meta":${JSON.stringify(meta)}}`;
}
