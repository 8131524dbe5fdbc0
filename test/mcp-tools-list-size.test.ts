import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { upsertCompanies } from '../core/companies/write-companies.js';
import { connectClient, createToolOrganization, sampleGroup, startTestMcp, toolNames, type SampleGroup, type TestMcp } from './mcp-fixtures.js';
import { dossier, years } from './support/company-dossiers.js';

// tools/list is read into the model's context by every agent host, in every session, before
// the agent calls anything: its size is a cost per session. Written out by zod in full it was
// 62,190 bytes (~15k tokens) for an organization with every tool, the profile's output schema
// alone 20,312; compacted (mcp/compact-json-schema.ts: shared subtrees as $refs, nullable types,
// no zod noise) 43,897, the profile's output schema 10,164. The budgets (+7%, +13% of those) leave
// room for a field or a description more, not for the schemas to be written out in full again: a
// new tool or a larger schema is a decision to raise them, knowing what it costs every agent.
// Raised on 28 Nov from 47,000 to 48,000, at 46,853 bytes: two agents' reviews found models
// misreading what the descriptions left unsaid (which roles each roleCategory holds, yoyChange a
// relative change and not points, a holder's kind, depth 0), and the words that say it cost
// about 3 KB (some 750 tokens) a session, against a wrong answer.
const TOOLS_LIST_BUDGET = 48_000;
const PROFILE_OUTPUT_BUDGET = 11_500;

let mcp: TestMcp;
let client: Client;
let group: SampleGroup;
let large: string;

beforeAll(async () => {
  mcp = await startTestMcp();
  group = sampleGroup();
  // A large company (EU definition), whose profile is the other branch of the profile's schema: peers, no risk.
  large = `${group.root.fiscalCode.slice(0, 6)}99999`;
  const lastYear = new Date().getUTCFullYear() - 1;
  await upsertCompanies(mcp.db, [...group.all, dossier(large, {
    legalName: `${group.token} Grandi Impianti S.P.A.`, legalForm: 'SPA', naceCode: '62.02', naceSection: 'J', province: 'MI',
    years: years([{ year: lastYear, revenue: 80_000_000, totalAssets: 60_000_000, employees: 400 }, { year: lastYear - 1, revenue: 75_000_000, totalAssets: 55_000_000, employees: 380 }]),
  })]);
  const org = await createToolOrganization(mcp.db);
  client = await connectClient(mcp.mcpUrl, org.key);
});
afterAll(async () => {
  await client?.close();
  await mcp?.close();
});

// Every way a value can be wrong, one at a time: each leaf replaced by an object, each key of
// each object dropped. A schema whose $refs did not resolve, or that let a field through
// unchecked, accepts some of them.
function* tamperings(value: unknown, path: string[] = []): Generator<{ path: string; mutate(root: any): void }> {
  if (value !== null && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      const at = [...path, key];
      if (!Array.isArray(value)) yield { path: `${at.join('.')} dropped`, mutate: (root) => { delete parentOf(root, at)[key]; } };
      yield* tamperings(child, at);
    }
    return;
  }
  yield { path: `${path.join('.')} replaced`, mutate: (root) => { parentOf(root, path)[path.at(-1)!] = { tampered: true }; } };
}
const parentOf = (root: any, path: string[]) => path.slice(0, -1).reduce((node, key) => node[key], root);

describe('tools/list', () => {
  it('when an organization with every tool lists them with the official client then the answer stays within its budget, the profile\'s output schema within its own', async () => {
    const result = await client.listTools();
    expect(result.tools.map((t) => t.name).sort()).toEqual([...toolNames].sort());
    const size = Buffer.byteLength(JSON.stringify(result));
    expect(size).toBeLessThanOrEqual(TOOLS_LIST_BUDGET);
    const profile = result.tools.find((t) => t.name === 'service_get_company_profile')!;
    expect(Buffer.byteLength(JSON.stringify(profile.outputSchema))).toBeLessThanOrEqual(PROFILE_OUTPUT_BUDGET);
  });

  it('when every tool is called for a sample company then the client accepts its structuredContent, which validates against the listed outputSchema and fails it once any field is wrong or missing', async () => {
    const { tools } = await client.listTools();
    const byName = new Map<string, Tool>(tools.map((t) => [t.name, t]));
    const calls: [string, Record<string, unknown>][] = [
      ['service_search_companies', { query: `${group.token} costruzioni` }],
      ['service_search_people', { name: `Bellini ${group.token}` }],
      ['service_get_company_profile', { taxId: group.root.fiscalCode }],
      ['service_get_company_profile', { taxId: large }],
      // No filed years: latest and history null or empty.
      ['service_get_company_profile', { taxId: group.ultimateHolding.fiscalCode }],
      ['service_get_company_structure', { fiscalCode: group.root.fiscalCode, depthUp: 3, depthDown: 3 }],
      ['service_get_company_metrics', { fiscalCode: group.root.fiscalCode }],
      ['service_analyze_company', { fiscalCode: group.root.fiscalCode }],
      // An error result is validated by the client too: the schemas' error branch.
      ['service_get_company_profile', { taxId: '00000000000' }],
    ];
    // The validator the SDK client uses for outputSchema (ajv, its formats), built as it builds it.
    const validators = new AjvJsonSchemaValidator();
    const branches = new Set<string>();
    for (const [name, args] of calls) {
      // callTool checks structuredContent against the listed outputSchema and throws when it does not match.
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
      const content = result.structuredContent as Record<string, any>;
      expect(content, name).toBeDefined();
      branches.add(result.isError ? `${name} error` : name === 'service_get_company_profile' ? `profile ${'peers' in content.profile ? 'large' : 'risk'}` : name);
      const validate = validators.getValidator(byName.get(name)!.outputSchema!);
      expect(validate(content), name).toMatchObject({ valid: true });
      const accepted: string[] = [];
      let tried = 0;
      for (const tampering of tamperings(content)) {
        const copy = structuredClone(content);
        tampering.mutate(copy);
        tried++;
        if (validate(copy).valid) accepted.push(tampering.path);
      }
      expect(accepted, `${name}: tampered results the schema accepts`).toEqual([]);
      expect(tried, name).toBeGreaterThan(5);
    }
    expect([...branches].sort()).toEqual([
      'profile large', 'profile risk', 'service_analyze_company', 'service_get_company_metrics', 'service_get_company_profile error',
      'service_get_company_structure', 'service_search_companies', 'service_search_people',
    ]);
  });
});
