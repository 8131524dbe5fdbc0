import { companyMetricsInputSchema, companyMetricsSchema, selectCompanyMetrics, unknownMetricSlugs } from '../../core/companies/company-metrics.js';
import { companyReportShape } from '../../core/companies/assemble-company-report.js';
import { notFoundMessage } from '../../core/companies/endpoint-catalogue.js';
import { AppError } from '../../core/errors/index.js';
import { defineTool } from './tool-definition.js';

export const getCompanyMetricsTool = defineTool({
  name: 'service_get_company_metrics',
  title: 'Get a company\'s financial metrics',
  description:
    'Returns chosen financial line items and ratios of an Italian company by fiscal code across chosen fiscal years (up to 10, newest first): ' +
    'one series per metric with its name, categories and unit, and per year the value, the previous year\'s value and the year-on-year change. ' +
    'Choose metrics by slug (e.g. revenue, ebitda, net_income, total_assets, total_equity, total_debts, cash_and_equivalents, ebitda_margin, ' +
    'roe, current_ratio, debt_to_equity) and/or by category (balance_sheet, income_statement, assets, liabilities, equity, revenue, costs, ' +
    'profitability, liquidity, solvency, efficiency, ratio). Without slugs or categories every metric comes back (some 50 a year: 20-80 KB of JSON over ten years), so name those you need, and the years. ' +
    'A slug of no metric is refused, unbilled, with the nearest ones (or, for a ratio service_analyze_company computes, the slugs it is computed from). ' +
    'The figures are exactly those of the company report.',
  inputSchema: companyMetricsInputSchema,
  outputSchema: companyMetricsSchema,
  annotations: { title: 'Get a company\'s financial metrics', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    // Before the lookup: slugs that name no metric are refused (not billed), with suggestions.
    if (args.slugs) {
      const refusal = unknownMetricSlugs(args, await ctx.store.metricDefinitions(args.slugs));
      if (refusal) throw refusal;
    }
    const report = await ctx.store.companyReport(args.fiscalCode);
    if (report === null) throw new AppError('not_found', notFoundMessage('fiscalCode', args.fiscalCode.toUpperCase()));
    // The report (cached) holds the ten newest years, forecasts included: with fewer, it holds
    // every year on file; with ten, older filed years may be missing from it, and the call
    // reads the company's whole history.
    if (report.financials.length < companyReportShape.years) return selectCompanyMetrics(report, args);
    return selectCompanyMetrics((await ctx.store.companyHistory(args.fiscalCode)) ?? report, args);
  },
});
