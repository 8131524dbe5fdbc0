import { z } from 'zod';
import { companyBrief, companyBriefSchema } from '../../core/companies/company-brief.js';
import { notFoundMessage, taxIdParamSchema } from '../../core/companies/endpoint-catalogue.js';
import { notFoundHint } from '../../core/companies/identifier-hints.js';
import { upperCaseIdentifier } from '../../core/companies/company-store.js';
import { companyProfileDataSchema } from '../../core/companies/index.js';
import { AppError } from '../../core/errors/index.js';
import { findByNameHint } from '../find-by-name-hint.js';
import { defineTool, type ToolContext } from './tool-definition.js';

// The API profile's own parameter: any non-empty tax ID (the spec: "minimum length 1, any
// non-empty value accepted"), spaces around it dropped, so the tool refuses exactly what the
// API's profile refuses and looks up everything else.
const inputSchema = z.strictObject({
  taxId: taxIdParamSchema.describe('The company\'s fiscal code or VAT number (case-insensitive; an IT prefix is accepted).'),
});

// What a tax ID can be once upper-cased: a fiscal code or VAT number of 11 digits (an IT
// prefix accepted) or a codice fiscale of 16 letters and digits.
const TAX_ID_SHAPE = /^(?:(?:IT)?\d{11}|[A-Z0-9]{16})$/;

// Agents pass a company's name or a search result's `id` as taxId, and were told only that no
// company has it: said what to do instead, here and not on the API, whose messages are the
// spec's. A value that only a slip keeps from being real (spaces, as in "IT 01126670213"; 10
// digits; a wrong check digit) has the API's hint, which says which. How to find the company is
// said for the organization's plan (find-by-name-hint.ts).
const taxIdShape = 'A tax ID is 11 digits (an IT prefix accepted) or a 16-character codice fiscale, without spaces.';

// As the API's profile says it: the tax ID as looked up, a long one cut short; and, when it
// cannot be a tax ID at all, how to find the company.
async function notFound(taxId: string, ctx: ToolContext): Promise<AppError> {
  const shown = upperCaseIdentifier(taxId);
  const message = notFoundMessage('taxId', shown);
  if (TAX_ID_SHAPE.test(shown) || notFoundHint(shown)) return new AppError('not_found', message);
  return new AppError('not_found', `${message} ${taxIdShape} ${await findByNameHint(ctx.mayCall)}`);
}

const outputSchema = z.strictObject({
  profile: companyProfileDataSchema.describe(
    'Exactly the `data` of the API\'s company profile: id, identity and latest year, then for large companies (EU definition) peerCount and ' +
    'up to 10 peers of the same NACE division nearest in revenue, otherwise the risk indicators, state aids and recent years.',
  ),
  ...companyBriefSchema.shape,
});

export const getCompanyProfileTool = defineTool({
  name: 'service_get_company_profile',
  title: 'Get a company profile',
  description:
    'Returns the profile of an Italian company by fiscal code or VAT number: its identity (legal name and form, founding year, VAT and fiscal ' +
    'code, NACE code, address), its latest filed year, and either its nearest peers (large companies) or its risk indicators and recent history ' +
    '(smaller companies), as the API\'s profile endpoint does; plus, for every company, whether it is dissolved (status, dissolutionYear), ' +
    'its registry contacts (PEC, CCIAA, REA) and a brief risk summary (indicators that are set or unknown, state aids).',
  inputSchema,
  outputSchema,
  annotations: { title: 'Get a company profile', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async run(args, ctx) {
    // All three come from the company cache when warm; the credit report's data is where registry and risk live.
    const [profile, credit, dissolution] = await Promise.all([
      ctx.store.companyProfile(args.taxId), ctx.store.creditReport(args.taxId), ctx.store.companyDissolution(args.taxId),
    ]);
    if (profile === null || credit === null || dissolution === null) throw await notFound(args.taxId, ctx);
    return { profile, ...companyBrief(credit, dissolution.dissolutionYear) };
  },
});
