import type { ToolDefinition } from './tool-definition.js';
import { analyzeCompanyTool } from './analyze-company.js';
import { getCompanyMetricsTool } from './get-company-metrics.js';
import { getCompanyProfileTool } from './get-company-profile.js';
import { getCompanyStructureTool } from './get-company-structure.js';
import { searchCompaniesTool } from './search-companies.js';
import { searchPeopleTool } from './search-people.js';

// Every tool a key connection can be offered, in the order tools/list shows them. A new tool
// is one file plus one line here (and a product in core/billing/products.ts).
export const toolDefinitions: ToolDefinition<any, any>[] = [
  searchCompaniesTool,
  searchPeopleTool,
  getCompanyProfileTool,
  getCompanyStructureTool,
  getCompanyMetricsTool,
  analyzeCompanyTool,
];

export { personOnlyToolMessage, personOnlyToolNames } from './person-only-tools.js';
export type { ToolContext, ToolDefinition } from './tool-definition.js';
