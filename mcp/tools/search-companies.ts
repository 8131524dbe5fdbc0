import { searchCompanies, searchCompaniesInputSchema, searchCompaniesResultSchema } from '../../core/companies/search-companies.js';
import { defineTool } from './tool-definition.js';

export const searchCompaniesTool = defineTool({
  name: 'service_search_companies',
  title: 'Search Italian companies',
  description:
    'Finds Italian companies by part of their legal name (small typos and word order tolerated), or by exact fiscal code or VAT number, ' +
    'optionally filtered by NACE section or code, province or municipality, size class, legal form and active/dissolved status. ' +
    'Returns up to `limit` companies ranked by relevance (name similarity; an exact identifier match scores 1), each with its fiscal code, ' +
    'VAT number, legal form, NACE code, province, municipality, size, status and latest revenue and headcount, plus `nextCursor` for the next page. ' +
    'When more than 250 companies match a name equally well (a common word alone), the pages cannot rank them all and say `truncated: true`: add words of the name or a filter to narrow it. ' +
    'Use a result\'s fiscalCode with the profile, structure, metrics and analysis tools.',
  inputSchema: searchCompaniesInputSchema,
  outputSchema: searchCompaniesResultSchema,
  annotations: { title: 'Search Italian companies', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  // An agent asked for "companies in Milan with revenue over 10 million" sends a revenue filter or
  // a sort, and read the list of arguments as a list of synonyms to try.
  unknownArgumentHint: (name) => {
    if (/revenue|turnover|fatturat|sales|ricav|employ|headcount|dipendent|staff/i.test(name)) {
      return 'it filters by neither revenue nor headcount: size is the EU SME class both set, and each result has latestRevenue and latestEmployees to filter by';
    }
    if (/^(sort|order)/i.test(name)) return 'results come best match first, or by legal name without a query: there is no other order';
    return undefined;
  },
  run: (args, ctx) => searchCompanies(ctx.companies, args),
});
