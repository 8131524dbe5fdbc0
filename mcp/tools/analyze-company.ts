import { analyzeCompany, companyAnalysisInputSchema, companyAnalysisSchema, loadPeerFigures } from '../../core/companies/company-analysis.js';
import { notFoundMessage } from '../../core/companies/endpoint-catalogue.js';
import { AppError } from '../../core/errors/index.js';
import { defineTool } from './tool-definition.js';

export const analyzeCompanyTool = defineTool({
  name: 'service_analyze_company',
  title: 'Analyse a company\'s financial health',
  description:
    'Computes a financial analysis of an Italian company by fiscal code from its filed statements (up to the last 5 years): profitability ' +
    'ratios (EBITDA and net margin, ROE, ROA, asset turnover), liquidity (current, quick, cash ratio) and solvency (equity ratio, debt to ' +
    'equity, net financial debt and its ratio to EBITDA, interest coverage), each with its history and trend; growth (revenue year-on-year ' +
    'and compound, net income, assets, equity, headcount); risk flags from the registry and from the figures (losses, negative equity, ' +
    'falling revenue, weak liquidity or coverage, high leverage); state aids; and the company\'s percentile among the companies of its NACE ' +
    'division. Nothing is estimated: every figure lists its formula and the reported inputs it came from, or is null with a note.',
  inputSchema: companyAnalysisInputSchema,
  outputSchema: companyAnalysisSchema,
  annotations: { title: 'Analyse a company\'s financial health', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    const report = await ctx.store.companyReport(args.fiscalCode);
    if (report === null) throw new AppError('not_found', notFoundMessage('fiscalCode', args.fiscalCode.toUpperCase()));
    const peers = await loadPeerFigures(ctx.companies, { fiscalCode: report.identity.fiscalCode ?? args.fiscalCode.toUpperCase(), naceCode: report.identity.naceCode });
    return analyzeCompany(report, { peers });
  },
});
