import { FISCAL_CODE_REFUSAL } from '../core/companies/identifier-hints.js';
import type { ErrorDetail } from '../core/errors/index.js';
import { searchCompaniesTool } from './tools/search-companies.js';
import type { ToolContext } from './tools/tool-definition.js';

// Agents pass a company's name, or a search result's `id`, where a tool takes its fiscal code
// or tax ID. Told only that the value is no code, a model retried with the name spelt another
// way: each refusal says how to find the code. The search tool is named only to an organization
// whose plan includes it: one without it would call it and be refused (not_entitled), so it is
// told that the user must supply the code.

/** How to find a company's code from its name, for this organization's plan. */
export async function findByNameHint(mayCall: ToolContext['mayCall']): Promise<string> {
  return (await mayCall(searchCompaniesTool.name))
    ? `To find a company by its name, call ${searchCompaniesTool.name} and pass the fiscalCode of a result (not its id).`
    : 'This tool finds a company by its tax ID only, and your organization\'s plan includes no search by name: ask the user for the company\'s fiscal code (codice fiscale) or VAT number (partita IVA).';
}

/**
 * `details` with findByNameHint added to a fiscalCode refused for its shape with no slip to name
 * (a lost zero, an IT prefix, spaces: those say what to send instead).
 */
export async function withFindByNameHint(details: ErrorDetail[], mayCall: ToolContext['mayCall']): Promise<ErrorDetail[]> {
  if (!details.some((d) => d.path === 'fiscalCode' && d.message === FISCAL_CODE_REFUSAL)) return details;
  const hint = await findByNameHint(mayCall);
  return details.map((d) => (d.path === 'fiscalCode' && d.message === FISCAL_CODE_REFUSAL ? { ...d, message: `${d.message}. ${hint}` } : d));
}
