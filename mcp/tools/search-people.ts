import { searchPeople, searchPeopleInputSchema, searchPeopleResultSchema } from '../../core/companies/search-people.js';
import { defineTool } from './tool-definition.js';

// roleCategory filters officers' roles, so it cannot be combined with another kind: the query
// would silently search officers anyway (and bill the call). Refused as invalid arguments
// instead, naming both fields, before anything is billed.
const inputSchema = searchPeopleInputSchema.superRefine((args, ctx) => {
  if (args.roleCategory !== undefined && args.kind !== undefined && args.kind !== 'officer') {
    ctx.addIssue({
      code: 'custom',
      path: ['kind'],
      message: `contradicts roleCategory ${args.roleCategory}, which only officers have: with roleCategory, set kind to officer or leave it out`,
    });
  }
});

export const searchPeopleTool = defineTool({
  name: 'service_search_people',
  title: 'Search company officers and owners',
  description:
    'Finds people by name among the officers (directors, auditors, legal representatives, ...) and the natural-person shareholders and ' +
    'beneficial owners of Italian companies (a stake held through the person\'s sole proprietorship included). Returns one entry per ' +
    'distinct name, best matches first, each with its roles: the name as filed, the kind ' +
    '(officer, shareholder, beneficial_owner), the role and role category or the ownership share, and the company (id, fiscal code, ' +
    'legal name, status). The service holds names only, so namesakes share one entry. Paginate with `nextCursor`.',
  inputSchema,
  outputSchema: searchPeopleResultSchema,
  annotations: { title: 'Search company officers and owners', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  run: (args, ctx) => searchPeople(ctx.companies, args),
});
