import { describe, expect, it } from 'vitest';
import { companyMetricsInputSchema } from '../core/companies/company-metrics.js';
import { searchCompaniesInputSchema } from '../core/companies/search-companies.js';
import { argumentDetails } from './argument-details.js';

const details = (schema: typeof searchCompaniesInputSchema | typeof companyMetricsInputSchema, args: Record<string, unknown>) =>
  argumentDetails(schema.safeParse(args).error?.issues ?? [], schema, args);

describe('argumentDetails', () => {
  it('when a value has the wrong type then its detail says so once, not also the checks zod ran on it anyway', () => {
    expect(details(searchCompaniesInputSchema, { query: ['rossi'] })).toEqual([{ path: 'query', message: 'Invalid input: expected string, received array' }]);
  });

  it('when an integer is past its bound then the bound is said, not also the largest integer a double holds', () => {
    expect(details(searchCompaniesInputSchema, { query: 'rossi', limit: 1e20 })).toEqual([{ path: 'limit', message: 'Too big: expected number to be <=50' }]);
    expect(details(companyMetricsInputSchema, { fiscalCode: '01126670213', years: [-1e20] })).toEqual([{ path: 'years.0', message: 'Too small: expected number to be >=1900' }]);
  });

  it('when a number was too large for JSON to read (1e400, read as Infinity) then it is said so, not "received Infinity"', () => {
    expect(details(searchCompaniesInputSchema, { query: 'rossi', limit: Infinity })).toEqual([{ path: 'limit', message: 'a number too large to hold (read as infinite)' }]);
    expect(details(companyMetricsInputSchema, { fiscalCode: '01126670213', years: [-Infinity] })).toEqual([{ path: 'years.0', message: 'a number too large to hold (read as infinite)' }]);
  });

  it('when a metric slug is longer than any slug then it is refused as such, not quoted back', () => {
    const long = 'a'.repeat(3_000);
    const found = details(companyMetricsInputSchema, { fiscalCode: '01126670213', slugs: [long, 'netIncome'] });
    expect(found).toEqual([
      { path: 'slugs.0', message: 'at most 100 characters: no metric slug is longer' },
      { path: 'slugs.1', message: 'a lower snake_case metric slug: net_income, not netIncome' },
    ]);
  });
});
