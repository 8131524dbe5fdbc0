import { companyStructure, companyStructureInputSchema, companyStructureSchema } from '../../core/companies/company-structure.js';
import { notFoundMessage } from '../../core/companies/endpoint-catalogue.js';
import { AppError } from '../../core/errors/index.js';
import { defineTool } from './tool-definition.js';

export const getCompanyStructureTool = defineTool({
  name: 'service_get_company_structure',
  title: 'Get a company\'s group structure',
  description:
    'Returns the ownership structure of an Italian company by fiscal code: its shareholders as a tree upward (who owns the owners) to ' +
    '`depthUp` levels, its subsidiaries as a tree downward to `depthDown` levels, its beneficial owners, officers and branches. Each node ' +
    'has the holder\'s name and share and, when the holder is a company known to the service, that company\'s id, fiscal code and name; ' +
    'cross-holdings are marked `cycle` and not repeated, and `moreBeyondDepth` says where the tree goes on.',
  inputSchema: companyStructureInputSchema,
  outputSchema: companyStructureSchema,
  annotations: { title: 'Get a company\'s group structure', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    const structure = await companyStructure(ctx.companies, args);
    if (structure === null) throw new AppError('not_found', notFoundMessage('fiscalCode', args.fiscalCode.toUpperCase()));
    return structure;
  },
});
