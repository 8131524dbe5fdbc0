import { randomInt } from 'node:crypto';
import { eventsOnBus } from './support/usage-bus.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { applyUsageBatch } from '../core/billing/apply-usage-batch.js';
import { buildAllowanceReport } from '../core/billing/allowance-report.js';
import { createCompanyStore } from '../core/companies/index.js';
import type { CompanyReportData } from '../core/companies/schemas/index.js';
import { upsertCompanies } from '../core/companies/write-companies.js';
import { requestIdSchema } from '../core/errors/index.js';
import { createLogger } from '../core/logging/index.js';
import { makePartitaIva } from '../core/sample-data/index.js';
import { toolDefinitions } from '../mcp/tools/index.js';
import {
  connectClient, createToolOrganization, json, personOnlyTools, rpc, sampleGroup, startTestMcp, toolNames,
  type SampleGroup, type TestMcp, type ToolOrganization,
} from './mcp-fixtures.js';
import { startTestApi } from './api-fixtures.js';
import { dossier, fiscalCodes } from './support/company-dossiers.js';

// Every tool over real HTTP with the official SDK client, on a small group of sample
// companies; plus billing: a successful call is one usage event, a failed call none.

let mcp: TestMcp;
let org: ToolOrganization;
let client: Client;
let group: SampleGroup;
let rootReport: CompanyReportData;

beforeAll(async () => {
  mcp = await startTestMcp();
  group = sampleGroup();
  await upsertCompanies(mcp.db, group.all);
  org = await createToolOrganization(mcp.db);
  client = await connectClient(mcp.mcpUrl, org.key);
  const store = createCompanyStore({ db: mcp.db, queryTimeoutMs: 5_000, logger: createLogger({ level: 'silent' }) });
  rootReport = (await store.companyReport(group.root.fiscalCode))!;
});
afterAll(async () => {
  await client?.close();
  await mcp?.close();
});

// What service_get_company_profile adds to a not_found whose taxId cannot be a tax ID (mcp/tools/get-company-profile.ts).
const searchHint = 'A tax ID is 11 digits (an IT prefix accepted) or a 16-character codice fiscale, without spaces. To find a company by its name, call service_search_companies and pass the fiscalCode of a result (not its id).';
// The same for an organization whose plan lacks service_search_companies, which it cannot call.
const noSearchHint = 'A tax ID is 11 digits (an IT prefix accepted) or a 16-character codice fiscale, without spaces. This tool finds a company by its tax ID only, and your organization\'s plan includes no search by name: ask the user for the company\'s fiscal code (codice fiscale) or VAT number (partita IVA).';

// Every successful result is checked against its tool's zod output schema here: the server
// does not parse its own output on each call (mcp/create-server.ts).
const outputSchemas = new Map(toolDefinitions.map((d) => [d.name as string, d.outputSchema]));
const call = async (name: string, args: Record<string, unknown>) => {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
  if (!result.isError) {
    const checked = outputSchemas.get(name)!.safeParse(result.structuredContent);
    expect(checked.success, `${name} result vs its output schema: ${JSON.stringify(checked.error?.issues.slice(0, 3))}`).toBe(true);
  }
  return result;
};
const data = <T = any>(result: CallToolResult): T => {
  expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
  // The text copy says the same as structuredContent.
  expect(JSON.parse((result.content[0] as { text: string }).text)).toEqual(result.structuredContent);
  return result.structuredContent as T;
};
// A billing worker of another test file may already have moved the event from the bus into
// the ledger: look in both.
const usageEvents = async (requestId: string) => {
  const bus = await eventsOnBus(mcp.db, { eventId: requestId });
  const ledger = await mcp.db('usage_ledger').where({ event_id: requestId, entry_type: 'usage' }).select('source', 'product', 'quantity', 'unit', 'key_id', 'organization_id');
  return [
    ...bus,
    ...ledger.map((r) => ({ eventId: requestId, organizationId: r.organization_id, keyId: r.key_id, source: r.source, product: r.product, quantity: r.quantity, unit: r.unit })),
  ];
};

describe('tools/list', () => {
  it('when an organization with every tool lists tools then the six company tools are there and the five person tools are not', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...toolNames].sort());
    for (const name of personOnlyTools) expect(tools.map((t) => t.name)).not.toContain(name);
  });

  it('when tools are listed then each has a title, its measure in the description, all four annotations, and valid input and output JSON Schemas', async () => {
    const { tools } = await client.listTools();
    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats.default(ajv);
    for (const tool of tools) {
      expect(tool.name).toMatch(/^service_[a-z_]+$/);
      expect(tool.title).toBeTruthy();
      expect(tool.description).toMatch(/Usage: each successful call records \d+ (credit|credits|call|calls) for your organization/);
      expect(tool.annotations).toEqual({ title: expect.any(String), readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type).toBe('object');
      expect(() => ajv.compile(tool.inputSchema)).not.toThrow();
      expect(() => ajv.compile(tool.outputSchema!)).not.toThrow();
    }
    const profile = tools.find((t) => t.name === 'service_get_company_profile')!;
    expect(profile.description).toContain('8 credits');
  });

  it('when tools are listed then the error branch of each output schema describes itself and every field, as its results do', async () => {
    const { tools } = await client.listTools();
    // Every node of a JSON Schema that names a type or lists properties, by its path.
    const undescribed = (node: any, path: string): string[] => {
      const here = node.description ? [] : [path];
      const properties = Object.entries(node.properties ?? {}).flatMap(([name, child]) => undescribed(child, `${path}.${name}`));
      const items = node.items ? undescribed(node.items, `${path}[]`) : [];
      return [...here, ...properties, ...items];
    };
    for (const tool of tools) {
      const branches = tool.outputSchema!.anyOf as any[];
      const errorBranch = branches.find((b) => b.properties?.error);
      expect(errorBranch, tool.name).toBeDefined();
      expect(undescribed(errorBranch, tool.name)).toEqual([]);
      expect(errorBranch.properties.error.properties.details.items.properties.path.description).toMatch(/argument/);
    }
  });

  it('when an agent follows initialize\'s instructions then each company tool is named with the argument it takes, and a call made so succeeds', async () => {
    const instructions = client.getInstructions()!;
    const { tools } = await client.listTools();
    const named = new Map<string, string>();
    for (const [, list, argument] of instructions.matchAll(/to ((?:service_[a-z_]+(?:, | or )?)+) as (\w+)/g)) {
      for (const name of list!.split(/, | or /)) named.set(name, argument!);
    }
    const companyTools = tools.filter((t) => !t.name.startsWith('service_search_')).map((t) => t.name).sort();
    expect([...named.keys()].sort()).toEqual(companyTools);
    for (const [name, argument] of named) {
      const tool = tools.find((t) => t.name === name)!;
      expect(Object.keys(tool.inputSchema.properties ?? {}), `${name} takes ${argument}`).toContain(argument);
      expect(tool.inputSchema.required, `${name} needs only ${argument}`).toEqual([argument]);
      data(await call(name, { [argument]: group.root.fiscalCode }));
    }
  });

  it('when the plan lacks a tool then it is not listed and calling it returns a not_entitled error result', async () => {
    const limited = await createToolOrganization(mcp.db, { tools: ['service_search_companies'] });
    const limitedClient = await connectClient(mcp.mcpUrl, limited.key);
    try {
      expect((await limitedClient.listTools()).tools.map((t) => t.name)).toEqual(['service_search_companies']);
      const result = (await limitedClient.callTool({ name: 'service_analyze_company', arguments: { fiscalCode: group.root.fiscalCode } })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect((result.structuredContent as any).error.code).toBe('not_entitled');
    } finally {
      await limitedClient.close();
    }
  });

  it('when the plan lacks tools then initialize\'s instructions name only the tools it lists, and say so when it lists none', async () => {
    const toolsIn = (text: string) => [...new Set(text.match(/service_[a-z_]+/g))].sort();
    for (const plan of [['service_search_companies', 'service_get_company_profile'], ['service_get_company_metrics'], ['service_search_people']]) {
      const limited = await createToolOrganization(mcp.db, { tools: plan });
      const limitedClient = await connectClient(mcp.mcpUrl, limited.key);
      try {
        const listed = (await limitedClient.listTools()).tools.map((t) => t.name).sort();
        expect(listed).toEqual([...plan].sort());
        expect(toolsIn(limitedClient.getInstructions()!), limitedClient.getInstructions()).toEqual(listed);
        if (plan.includes('service_search_companies')) expect(limitedClient.getInstructions()).toContain('service_search_companies (by name, fiscal code or VAT number)');
      } finally {
        await limitedClient.close();
      }
    }
    expect(toolsIn(client.getInstructions()!)).toEqual((await client.listTools()).tools.map((t) => t.name).sort());
    // A plan without tools, and no plan at all (client_not_configured on a call): either way the
    // account manager changes it, as the refusals of a call say; administrators cannot.
    const none = await createToolOrganization(mcp.db, { tools: [] });
    const unprovisioned = await createToolOrganization(mcp.db, { tools: [] });
    await mcp.db('organizations').where({ id: unprovisioned.organizationId }).update({ plan_id: null });
    for (const organization of [none, unprovisioned]) {
      const noneClient = await connectClient(mcp.mcpUrl, organization.key);
      try {
        expect((await noneClient.listTools()).tools).toEqual([]);
        expect(noneClient.getInstructions()).toMatch(/plan includes none of these tools yet, so tools\/list is empty: ask your account manager about a plan that includes them\.$/);
        expect(noneClient.getInstructions()).not.toMatch(/administrator/);
        expect(toolsIn(noneClient.getInstructions()!)).toEqual([]);
      } finally {
        await noneClient.close();
      }
    }
    const unprovisionedClient = await connectClient(mcp.mcpUrl, unprovisioned.key);
    try {
      const refused = await unprovisionedClient.callTool({ name: 'service_search_companies', arguments: { query: 'gallo' } });
      expect((refused.structuredContent as any).error).toMatchObject({ code: 'client_not_configured', message: expect.stringContaining('account manager') });
    } finally {
      await unprovisionedClient.close();
    }
  });
});

describe('service_search_companies', () => {
  it('when searching by a name fragment then the group\'s companies are found, best match first, with a working cursor', async () => {
    const best = data(await call('service_search_companies', { query: `${group.token} costruzoni` })); // sic: a typo
    expect(best.items[0].fiscalCode).toBe(group.root.fiscalCode);
    const all = data(await call('service_search_companies', { query: group.token, limit: 50 }));
    expect(all.items.map((i: any) => i.fiscalCode).sort()).toEqual(group.all.map((d) => d.fiscalCode).sort());
    // Paging two at a time returns the same companies in the same order.
    const paged: string[] = [];
    let cursor: string | undefined;
    do {
      const page = data(await call('service_search_companies', { query: group.token, limit: 2, ...(cursor && { cursor }) }));
      paged.push(...page.items.map((i: any) => i.fiscalCode));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(paged).toEqual(all.items.map((i: any) => i.fiscalCode));
  });

  it('when searching by fiscal code or IT-prefixed VAT number then exactly that company comes back with score 1', async () => {
    for (const query of [group.root.fiscalCode, `IT${group.root.fiscalCode}`]) {
      const result = data(await call('service_search_companies', { query }));
      expect(result.items).toHaveLength(1);
      expect(result.items[0]).toMatchObject({ fiscalCode: group.root.fiscalCode, score: 1, status: 'active' });
    }
  });

  it('when a name with digits is searched in a comune typed without its accent then the company is found by name', async () => {
    // Without its spaces the query is 16 letters and digits, which were once taken for a codice
    // fiscale. A word of its own, not the group's, whose searches list the group alone.
    const word = Array.from({ length: 8 }, () => String.fromCharCode(97 + randomInt(26))).join('');
    const code = fiscalCodes()();
    await upsertCompanies(mcp.db, [dossier(code, { legalName: `${word} 2000 Nord S.r.l.`, province: 'CO', municipality: 'Cantù' })]);
    // As typed, and as registries and keyboards without accented capitals write it (vowel and apostrophe).
    for (const municipality of ['Cantu', "CANTU'", 'Cantu’']) {
      const result = data(await call('service_search_companies', { query: `${word} 2000 Nord`, municipality }));
      expect(result.items.map((i: any) => [i.fiscalCode, i.municipality]), municipality).toEqual([[code, 'Cantù']]);
    }
  });

  it('when filtering by status dissolved then only the dissolved company of the group is returned', async () => {
    const result = data(await call('service_search_companies', { query: group.token, status: 'dissolved', province: 'mi', naceCode: '62' }));
    expect(result.items.map((i: any) => i.fiscalCode)).toEqual([group.subs[2]!.fiscalCode]);
  });

  it('when closed-list filters are written in another case, with dots or spaces, then each is read as the option it names; a value naming none is still invalid_params, listing them', async () => {
    const canonical = data(await call('service_search_companies', { query: group.token, status: 'dissolved', naceSection: 'J', legalForm: 'SRL' }));
    expect(canonical.items.length).toBeGreaterThan(0);
    for (const [status, naceSection, legalForm] of [['Dissolved', 'j', 'srl'], ['DISSOLVED', ' J ', 'S.r.l.'], ['dissolved', 'j', 's r l']]) {
      const lenient = data(await call('service_search_companies', { query: group.token, status, naceSection, legalForm }));
      expect(lenient.items, `${status} ${naceSection} ${legalForm}`).toEqual(canonical.items);
    }
    const refused = await call('service_search_companies', { query: group.token, legalForm: 'S.r.l.x' });
    expect(refused.isError).toBe(true);
    expect((refused.structuredContent as any).error).toMatchObject({ code: 'invalid_params', details: [{ path: 'legalForm', message: expect.stringContaining('SRL') }] });
    const officers = data(await call('service_search_people', { name: `Bellini Marco ${group.token}`, kind: 'Officer', roleCategory: 'Legal Representative' }));
    expect(officers.people.length).toBeGreaterThan(0);
  });

  it('when the query is retyped in another case or spacing between pages then the cursor still pages on, as the search is the same', async () => {
    const first = data(await call('service_search_companies', { query: group.token, limit: 2 }));
    const next = data(await call('service_search_companies', { query: `  ${group.token.toUpperCase()} `, limit: 2, cursor: first.nextCursor }));
    const same = data(await call('service_search_companies', { query: group.token, limit: 2, cursor: first.nextCursor }));
    expect(next.items.map((i: any) => i.fiscalCode)).toEqual(same.items.map((i: any) => i.fiscalCode));
    expect(next.items.length).toBeGreaterThan(0);
  });

  it('when a cursor is reused with other criteria, or altered, then an invalid_params error result names the cursor, its detail saying what is wrong with it and its message what to do, each once', async () => {
    const first = data(await call('service_search_companies', { query: group.token, limit: 1 }));
    const refusals = [
      await call('service_search_companies', { query: `${group.token} holding`, limit: 1, cursor: first.nextCursor }),
      await call('service_search_companies', { query: group.token, limit: 1, cursor: `${first.nextCursor}x` }),
    ].map((result) => ({ error: (result.structuredContent as any).error, text: (result.content[0] as { text: string }).text }));
    expect(refusals.map((r) => r.error)).toEqual([
      expect.objectContaining({ code: 'invalid_params', message: expect.stringMatching(/^The cursor belongs to another search: repeat/), details: [{ path: 'cursor', message: 'made by a search with other criteria, by the other search tool, or before the service changed how it ranks names' }] }),
      expect.objectContaining({ code: 'invalid_params', message: 'The cursor is not one this service returned: pass nextCursor exactly as received.', details: [{ path: 'cursor', message: 'malformed or altered' }] }),
    ]);
    for (const { error, text } of refusals) expect(text.split('\n').slice(0, 2)).toEqual([`Error invalid_params: ${error.message}`, `- cursor: ${error.details[0].message}`]);
  });
});

describe('service_search_people', () => {
  it('when searching a person by name then their roles in several companies come back', async () => {
    const result = data(await call('service_search_people', { name: `Bellini Marco ${group.token}` }));
    const person = result.people[0];
    expect(person.name).toBe(`Marco ${group.token} Bellini`);
    const roles = person.roles.map((r: any) => `${r.kind}:${r.company.fiscalCode}`).sort();
    expect(roles).toEqual([
      `officer:${group.root.fiscalCode}`, `officer:${group.subs[0]!.fiscalCode}`, `shareholder:${group.subs[1]!.fiscalCode}`,
    ].sort());
  });

  it('when roleCategory comes with a kind other than officer then an invalid_params error result names both fields and nothing is billed; with kind officer the search runs', async () => {
    for (const kind of ['shareholder', 'beneficial_owner']) {
      const result = await call('service_search_people', { name: `Bellini Marco ${group.token}`, kind, roleCategory: 'legal_representative' });
      const error = (result.structuredContent as any).error;
      expect(error.code).toBe('invalid_params');
      expect(error.details).toEqual([{ path: 'kind', message: expect.stringContaining('roleCategory') }]);
      expect(await usageEvents(error.requestId)).toHaveLength(0);
    }
    const officers = data(await call('service_search_people', { name: `Bellini Marco ${group.token}`, kind: 'officer', roleCategory: 'legal_representative' }));
    expect(officers.people[0].roles.map((r: any) => r.company.fiscalCode)).toEqual([group.root.fiscalCode]);
  });
});

describe('service_get_company_profile', () => {
  it('when the profile is requested then it carries the API profile data plus registry and a risk brief', async () => {
    const result = data(await call('service_get_company_profile', { taxId: group.root.fiscalCode.toLowerCase() }));
    expect(result.profile.identity.fiscalCode).toBe(group.root.fiscalCode);
    expect(result.profile.risk).toBeDefined(); // a small company: the risk branch
    expect(result.registry).toEqual({ pec: `${group.root.fiscalCode}@pec.it`, cciaa: 'MI', rea: expect.any(String) });
    expect(result.risk).toMatchObject({ flagged: [], unknown: ['assetEncumbrances'], stateAids: { count: 2, amountLast36Months: 25_000 } });
    expect(result).toMatchObject({ status: 'active', dissolutionYear: null });
    // Exactly the API's profile data.
    const store = createCompanyStore({ db: mcp.db, queryTimeoutMs: 5_000, logger: createLogger({ level: 'silent' }) });
    expect(result.profile).toEqual(await store.companyProfile(group.root.fiscalCode));
  });

  it('when the company is dissolved then the profile says so, though the API profile\'s identity has no dissolution', async () => {
    const [code] = [fiscalCodes()()];
    await upsertCompanies(mcp.db, [dossier(code!, { legalName: 'Sciolta Esempio S.r.l.', dissolutionYear: 2024 })]);
    const result = data(await call('service_get_company_profile', { taxId: code }));
    expect(result).toMatchObject({ status: 'dissolved', dissolutionYear: 2024 });
    expect(result.profile.identity).not.toHaveProperty('dissolutionYear');
  });

  it('when no company matches then a not_found error result comes back and nothing is billed', async () => {
    const result = await call('service_get_company_profile', { taxId: '00000000001' });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as any).error;
    expect(error.code).toBe('not_found');
    expect(requestIdSchema.safeParse(error.requestId).success).toBe(true);
    expect(await usageEvents(error.requestId)).toHaveLength(0);
  });

  it('when a tax ID is empty, spaces only, longer than any identifier or padded then the tool answers as the API\'s profile does: only an empty one is invalid_params', async () => {
    const api = await startTestApi();
    try {
      const both = await createToolOrganization(mcp.db, { endpoints: ['company-profile'] });
      const bothClient = await connectClient(mcp.mcpUrl, both.key);
      try {
        const tool = async (taxId: string) => {
          const result = (await bothClient.callTool({ name: 'service_get_company_profile', arguments: { taxId } })) as CallToolResult;
          return result.isError ? (result.structuredContent as any).error.code : 'found';
        };
        const apiAnswer = async (taxId: string) => {
          const res = await fetch(`${api.url}/companies/${encodeURIComponent(taxId)}/profile`, { headers: { Authorization: `Bearer ${both.key}` } });
          return res.status === 200 ? 'found' : (await json(res)).error.code;
        };
        const cases = ['', '   ', 'A'.repeat(33), `  ${group.root.fiscalCode}  `, `it${group.root.fiscalCode}`, `IT${group.root.fiscalCode}X`];
        const answers = [];
        for (const taxId of cases) answers.push({ taxId, tool: await tool(taxId), api: await apiAnswer(taxId) });
        expect(answers).toEqual([
          { taxId: '', tool: 'invalid_params', api: 'invalid_params' },
          { taxId: '   ', tool: 'not_found', api: 'not_found' },
          { taxId: 'A'.repeat(33), tool: 'not_found', api: 'not_found' },
          { taxId: `  ${group.root.fiscalCode}  `, tool: 'found', api: 'found' },
          { taxId: `it${group.root.fiscalCode}`, tool: 'found', api: 'found' },
          { taxId: `IT${group.root.fiscalCode}X`, tool: 'not_found', api: 'not_found' },
        ]);
        // A tax ID a URL could not carry is no company's either; the message quotes its start only.
        const huge = (await bothClient.callTool({ name: 'service_get_company_profile', arguments: { taxId: 'A'.repeat(200_000) } })) as CallToolResult;
        expect((huge.structuredContent as any).error).toMatchObject({ code: 'not_found', message: `No company has the tax ID "${'A'.repeat(64)}"… (200000 characters). ${searchHint}` });
      } finally {
        await bothClient.close();
      }
    } finally {
      await api.close();
    }
  });

  it('when the tax ID holds a NUL then it matches no company (not_found), rather than failing the store', async () => {
    const result = await call('service_get_company_profile', { taxId: `${group.root.fiscalCode}\u0000` });
    expect((result.structuredContent as any).error.code).toBe('not_found');
    // The message quotes the tax ID as JSON: no raw NUL (or other control character) in the text.
    expect((result.structuredContent as any).error.message).toBe(`No company has the tax ID "${group.root.fiscalCode}\\u0000". ${searchHint}`);
  });

  it('when the tax ID cannot be one (a name, a search result\'s id, a VAT number with a space) then not_found says how to find the company; the API\'s message stays the spec\'s', async () => {
    const api = await startTestApi();
    try {
      const both = await createToolOrganization(mcp.db, { endpoints: ['company-profile'] });
      const bothClient = await connectClient(mcp.mcpUrl, both.key);
      try {
        const toolMessage = async (taxId: string) => {
          const result = (await bothClient.callTool({ name: 'service_get_company_profile', arguments: { taxId } })) as CallToolResult;
          expect(result.isError).toBe(true);
          const { error } = result.structuredContent as any;
          expect(error.code).toBe('not_found');
          // The model reads the text: the hint is in it too.
          expect((result.content[0] as { text: string }).text).toContain(error.message);
          return error.message as string;
        };
        const apiMessage = async (taxId: string) => {
          const res = await fetch(`${api.url}/companies/${encodeURIComponent(taxId)}/profile`, { headers: { Authorization: `Bearer ${both.key}` } });
          expect(res.status).toBe(404);
          return (await json(res)).error.message as string;
        };
        const unknownCode = makePartitaIva(randomInt(1_000_000, 9_000_000), 15);
        const cases = [
          ['Gallo Import Export S.r.l.', 'No company has the tax ID "GALLO IMPORT EXPORT S.R.L.".'],
          ['1', 'No company has the tax ID "1".'],
        ] as const;
        for (const [taxId, apiText] of cases) {
          expect(await toolMessage(taxId)).toBe(`${apiText} ${searchHint}`);
          expect(await apiMessage(taxId)).toBe(apiText);
        }
        // A VAT number written with a space, as invoices do: the API's hint, which says what to send.
        expect(await apiMessage('IT 01126670213')).toBe('No company has the tax ID "IT 01126670213"; drop the spaces: IT01126670213.');
        expect(await toolMessage('IT 01126670213')).toBe(await apiMessage('IT 01126670213'));
        // A value shaped like a tax ID (11 digits, with or without IT; 16 characters) is one
        // we may lack: no hint, the API's message.
        for (const taxId of [unknownCode, `IT${unknownCode}`, 'ZZZZZZ99Z99Z999Z']) {
          expect(await toolMessage(taxId)).toBe(await apiMessage(taxId));
        }
      } finally {
        await bothClient.close();
      }
    } finally {
      await api.close();
    }
  });
});

describe('service_get_company_profile without the search tool', () => {
  it('when the plan lacks service_search_companies then not_found for a name says the user must give the tax ID and names no tool the plan lacks; with it, the hint names it', async () => {
    const plans = [
      { tools: ['service_get_company_profile'], hint: noSearchHint },
      { tools: ['service_get_company_profile', 'service_search_people', 'service_get_company_metrics'], hint: noSearchHint },
      { tools: ['service_get_company_profile', 'service_search_companies'], hint: searchHint },
    ];
    for (const plan of plans) {
      const limited = await createToolOrganization(mcp.db, { tools: plan.tools });
      const limitedClient = await connectClient(mcp.mcpUrl, limited.key);
      try {
        const listed = (await limitedClient.listTools()).tools.map((t) => t.name);
        // A name where a fiscal code goes: the same hint after the refusal, on a tool the plan has.
        if (listed.includes('service_get_company_metrics')) {
          const refused = (await limitedClient.callTool({ name: 'service_get_company_metrics', arguments: { fiscalCode: 'Gallo Import Export' } })) as CallToolResult;
          expect((refused.structuredContent as any).error.details).toEqual([{ path: 'fiscalCode', message: `must be an 11-digit code or a 16-character codice fiscale. ${plan.hint.replace(/^A tax ID is [^.]*\. /, '')}` }]);
        }
        for (const taxId of ['Gallo Import Export S.r.l.', 'gallo import']) {
          const result = (await limitedClient.callTool({ name: 'service_get_company_profile', arguments: { taxId } })) as CallToolResult;
          const { error } = result.structuredContent as any;
          expect(error.code).toBe('not_found');
          expect(error.message).toBe(`No company has the tax ID ${JSON.stringify(taxId.toUpperCase())}. ${plan.hint}`);
          expect((result.content[0] as { text: string }).text).toContain(error.message);
          // Every tool the message names is one tools/list shows this organization.
          for (const named of error.message.match(/service_[a-z_]+/g) ?? []) expect(listed, error.message).toContain(named);
        }
      } finally {
        await limitedClient.close();
      }
    }
  });
});

describe('service_get_company_structure', () => {
  it('when the structure is walked then subsidiaries follow the chain, the cross-holding is marked as a cycle, and owners go up', async () => {
    const s = data(await call('service_get_company_structure', { fiscalCode: group.root.fiscalCode, depthUp: 2, depthDown: 4 }));
    const [sub1] = s.subsidiaries;
    expect(sub1.company.fiscalCode).toBe(group.subs[0]!.fiscalCode);
    const sub2 = sub1.subsidiaries[0];
    expect(sub2.company.fiscalCode).toBe(group.subs[1]!.fiscalCode);
    const sub3 = sub2.subsidiaries[0];
    expect(sub3).toMatchObject({ company: { fiscalCode: group.subs[2]!.fiscalCode }, share: 0.6 });
    // sub3 owns 10% of root: root is already on this branch, so it is marked and not expanded.
    expect(sub3.subsidiaries).toEqual([expect.objectContaining({ cycle: true, company: expect.objectContaining({ fiscalCode: group.root.fiscalCode }), subsidiaries: [] })]);

    const holding = s.shareholders.find((h: any) => h.company?.fiscalCode === group.holding.fiscalCode);
    expect(holding.shareholders[0]).toMatchObject({ company: { fiscalCode: group.ultimateHolding.fiscalCode }, moreBeyondDepth: true, shareholders: [] });
    expect(s.beneficialOwners).toEqual([{ name: 'Giulia Fontana', share: 0.9 }]);
    expect(s.officers).toEqual(rootReport.officers);
    expect(s.branches).toEqual(rootReport.branches);
    expect(s.truncated).toBe(false);
  });

  it('when holders are a person and companies not on file then each node says which kind it is, so a foreign company is not read as a person', async () => {
    const code = fiscalCodes()();
    await upsertCompanies(mcp.db, [dossier(code, { legalName: 'Holder Kinds S.r.l.', shareholders: [
      { name: 'Anna Neri', share: 0.1 }, { name: 'Müller Beteiligungs GmbH', share: 0.8 }, { name: 'Holding Estera', share: 0.1, fiscalCode: '01234567897' },
    ] })]);
    const s = data(await call('service_get_company_structure', { fiscalCode: code, depthUp: 1, depthDown: 0 }));
    expect(s.shareholders.map((h: any) => [h.name, h.kind, h.company])).toEqual([
      ['Anna Neri', 'person', null], ['Müller Beteiligungs GmbH', 'company', null], ['Holding Estera', 'company', null],
    ]);
  });

  it('when a link is filed on one side only (the bank names its holding as shareholder, the holding lists no subsidiary) then it is walked both ways, once, each company saying whether it is dissolved', async () => {
    const next = fiscalCodes();
    const [holding, bank, leasing] = [next(), next(), next()];
    await upsertCompanies(mcp.db, [
      dossier(holding, { legalName: 'Esempio Holding S.p.A.' }),
      dossier(bank, { legalName: 'Banca Esempio S.p.A.', shareholders: [{ name: 'Esempio Holding S.p.A.', share: 1, fiscalCode: holding }] }),
      // Filed on both sides: listed once, in the leasing company's own words.
      dossier(leasing, { legalName: 'Esempio Leasing S.p.A.', dissolutionYear: 2023, shareholders: [{ name: 'Banca Esempio', share: 0.9, fiscalCode: bank }] }),
    ]);
    await upsertCompanies(mcp.db, [dossier(bank, { legalName: 'Banca Esempio S.p.A.', shareholders: [{ name: 'Esempio Holding S.p.A.', share: 1, fiscalCode: holding }], subsidiaries: [{ name: 'Esempio Leasing', share: 0.9, fiscalCode: leasing }] })]);
    const down = data(await call('service_get_company_structure', { fiscalCode: holding, depthUp: 1, depthDown: 3 }));
    expect(down.shareholders).toEqual([]);
    expect(down.company).toEqual({ id: expect.any(String), fiscalCode: holding, legalName: 'Esempio Holding S.p.A.', status: 'active' });
    expect(down.subsidiaries).toEqual([expect.objectContaining({
      name: 'Banca Esempio S.p.A.', share: 1, company: expect.objectContaining({ fiscalCode: bank, status: 'active' }),
      subsidiaries: [expect.objectContaining({ name: 'Esempio Leasing', share: 0.9, company: expect.objectContaining({ fiscalCode: leasing, status: 'dissolved' }), subsidiaries: [] })],
    })]);
    const up = data(await call('service_get_company_structure', { fiscalCode: leasing, depthUp: 3, depthDown: 1 }));
    expect(up.company).toMatchObject({ fiscalCode: leasing, status: 'dissolved' });
    expect(up.shareholders).toEqual([expect.objectContaining({
      name: 'Banca Esempio', company: expect.objectContaining({ fiscalCode: bank }),
      shareholders: [expect.objectContaining({ name: 'Esempio Holding S.p.A.', company: expect.objectContaining({ fiscalCode: holding }), shareholders: [] })],
    })]);
    // At depth 1 the holding knows there is more below, though it files nothing itself.
    expect(data(await call('service_get_company_structure', { fiscalCode: holding, depthUp: 0, depthDown: 1 })).subsidiaries).toEqual([expect.objectContaining({ moreBeyondDepth: true })]);
    // A company's own list is the whole of it: its holder named without a code is not joined by
    // the holder's own filing of the same link (which would make 140%).
    const [owned, owner] = [next(), next()];
    await upsertCompanies(mcp.db, [
      dossier(owned, { legalName: 'Alfa Prodotti S.r.l.', shareholders: [{ name: 'Holding Beta', share: 0.7 }] }),
      dossier(owner, { legalName: 'Holding Beta S.p.A.', subsidiaries: [{ name: 'Alfa Prodotti', share: 0.7, fiscalCode: owned }] }),
    ]);
    expect(data(await call('service_get_company_structure', { fiscalCode: owned, depthUp: 1, depthDown: 0 })).shareholders)
      .toEqual([expect.objectContaining({ name: 'Holding Beta', share: 0.7, company: null })]);
  });

  it('when depthDown is 1 then only direct subsidiaries are listed, flagged as having more below', async () => {
    const s = data(await call('service_get_company_structure', { fiscalCode: group.root.fiscalCode, depthUp: 0, depthDown: 1 }));
    expect(s.shareholders).toEqual([]);
    expect(s.subsidiaries).toEqual([expect.objectContaining({ moreBeyondDepth: true, subsidiaries: [] })]);
  });
});

describe('service_get_company_metrics', () => {
  it('when metrics are chosen by slug and category then every value, previous value and change equals the company report\'s', async () => {
    const m = data(await call('service_get_company_metrics', { fiscalCode: group.root.fiscalCode, slugs: ['revenue'], categories: ['solvency'] }));
    expect(m.years).toEqual(rootReport.financials.map((f) => f.year));
    const slugs = m.metrics.map((s: any) => s.slug);
    expect(slugs).toContain('revenue');
    for (const series of m.metrics) {
      for (const v of series.values) {
        const reported = rootReport.financials.find((f) => f.year === v.year)!.metrics.find((x) => x.slug === series.slug)!;
        expect(v).toMatchObject({ value: reported.value, previousValue: reported.previousValue, yoyChange: reported.yoyChange });
      }
    }
    const revenue = m.metrics.find((s: any) => s.slug === 'revenue');
    expect(revenue.values[0].yoyChange).toBeCloseTo(0.1, 4);
  });

  it('when a company has more years than the report\'s ten, forecasts among them, then the ten newest filed years are covered by default and older ones when asked, with the report\'s figures', async () => {
    const code = fiscalCodes()();
    // 12 filed years (2013–2024, revenue 1,000 growing by 100 a year) and 2 forecasts: the report shows 2026 … 2017.
    const filed = Array.from({ length: 12 }, (_, i) => ({ year: 2013 + i, metrics: [{ slug: 'revenue', value: 1_000 + 100 * i }] }));
    const forecasts = [2025, 2026].map((year) => ({ year, isForecasted: true, metrics: [{ slug: 'revenue', value: 3_000 }] }));
    await upsertCompanies(mcp.db, [dossier(code, { years: [...filed, ...forecasts] })]);
    const all = data(await call('service_get_company_metrics', { fiscalCode: code, slugs: ['revenue'] }));
    expect(all.years).toEqual([2024, 2023, 2022, 2021, 2020, 2019, 2018, 2017, 2016, 2015]);
    expect(all.availableYears).toEqual([2026, 2025, 2024, 2023, 2022, 2021, 2020, 2019, 2018, 2017, 2016, 2015, 2014, 2013]);
    expect(all.forecastYears).toEqual([2026, 2025]);
    const old = data(await call('service_get_company_metrics', { fiscalCode: code, slugs: ['revenue'], years: [2013, 2014, 2024] }));
    expect(old).toMatchObject({ years: [2024, 2014, 2013], missingYears: [], missingSlugs: [] });
    expect(old.metrics[0].values).toEqual([
      { year: 2024, isForecasted: false, value: 2_100, previousValue: 2_000, yoyChange: 0.05, marketValue: null, score: null },
      { year: 2014, isForecasted: false, value: 1_100, previousValue: 1_000, yoyChange: 0.1, marketValue: null, score: null },
      { year: 2013, isForecasted: false, value: 1_000, previousValue: null, yoyChange: null, marketValue: null, score: null },
    ]);
    const withForecasts = data(await call('service_get_company_metrics', { fiscalCode: code, slugs: ['revenue'], includeForecasts: true }));
    expect(withForecasts.years).toEqual([2026, 2025, 2024, 2023, 2022, 2021, 2020, 2019, 2018, 2017]);
    // A year not on file covers nothing: the slug is not said to be missing, the year is.
    expect(data(await call('service_get_company_metrics', { fiscalCode: code, slugs: ['revenue'], years: [2012] }))).toMatchObject({ missingYears: [2012], missingSlugs: [], years: [] });
  });

  it('when a slug asked names no metric then invalid_params names each such slug with the nearest slugs, also beside known slugs or categories, and nothing is billed', async () => {
    const result = await call('service_get_company_metrics', { fiscalCode: group.root.fiscalCode, slugs: ['revenu', 'zzz_nothing'] });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as any).error;
    expect(error).toMatchObject({ code: 'invalid_params', message: expect.stringMatching(/^No metric has any of the slugs revenu, zzz_nothing\./) });
    expect(error.details).toEqual([
      { path: 'slugs.0', message: expect.stringMatching(/^no metric has this slug; did you mean revenue\b/) },
      { path: 'slugs.1', message: 'no metric has this slug' },
    ]);
    expect(await usageEvents(error.requestId)).toEqual([]);
    // Beside a known slug, or with categories: refused too. Answered, the unknown slug was listed
    // in missingSlugs, which says the company did not report it.
    for (const args of [{ slugs: ['revenue', 'revenu'] }, { slugs: ['revenu'], categories: ['revenue'] }]) {
      const mixed = (await call('service_get_company_metrics', { fiscalCode: group.root.fiscalCode, ...args })).structuredContent as any;
      expect(mixed.error.code, JSON.stringify(args)).toBe('invalid_params');
      expect(mixed.error.message).toMatch(/^No metric has the slug revenu\./);
      expect(mixed.error.details).toEqual([{ path: `slugs.${args.slugs.indexOf('revenu')}`, message: expect.stringMatching(/^no metric has this slug; did you mean revenue\b/) }]);
      expect(await usageEvents(mixed.error.requestId)).toEqual([]);
    }
  });

  it('when a slug asked is a ratio of the company analysis then the refusal says which tool computes it and from which metrics', async () => {
    const result = (await call('service_get_company_metrics', { fiscalCode: group.root.fiscalCode, slugs: ['revenue', 'net_margin', 'net_financial_debt'] })).structuredContent as any;
    expect(result.error.code).toBe('invalid_params');
    expect(result.error.details).toEqual([
      { path: 'slugs.1', message: 'no metric has this slug: service_analyze_company computes it (net_income / revenue); ask here for net_income, revenue' },
      { path: 'slugs.2', message: 'no metric has this slug: service_analyze_company computes it (bank_debts - cash_and_equivalents - current_financial_assets); ask here for bank_debts, cash_and_equivalents, current_financial_assets; or ask for net_financial_position, the same figure as the company data supplies it' },
    ]);
    // Its growth figures, and the headcount, which is no metric at all.
    const growth = (await call('service_get_company_metrics', { fiscalCode: group.root.fiscalCode, slugs: ['revenue_growth', 'revenue_cagr', 'employees', 'employees_growth'] })).structuredContent as any;
    expect(growth.error.details).toEqual([
      { path: 'slugs.0', message: 'no metric has this slug: service_analyze_company computes it from revenue; ask here for revenue, whose yoyChange is the change on the year before' },
      { path: 'slugs.1', message: 'no metric has this slug: service_analyze_company computes it from revenue; ask here for revenue, whose yoyChange is the change on the year before' },
      { path: 'slugs.2', message: 'no metric has this slug: the headcount is not a metric: the profile\'s latest year has employees, and service_analyze_company its growth (employees_growth)' },
      { path: 'slugs.3', message: 'no metric has this slug: the headcount is not a metric: the profile\'s latest year has employees, and service_analyze_company its growth (employees_growth)' },
    ]);
  });

  it('when a slug is written in camelCase or with capitals then the refusal gives its snake_case form', async () => {
    const result = (await call('service_get_company_metrics', { fiscalCode: group.root.fiscalCode, slugs: ['netIncome', 'Revenue', 'net income', 'x.y', 'EBITDAMargin', 'NETINCOME'] })).structuredContent as any;
    expect(result.error.code).toBe('invalid_params');
    expect(result.error.details).toEqual([
      { path: 'slugs.0', message: 'a lower snake_case metric slug: net_income, not netIncome' },
      { path: 'slugs.1', message: 'a lower snake_case metric slug: revenue, not Revenue' },
      { path: 'slugs.2', message: 'a lower snake_case metric slug: net_income, not net income' },
      { path: 'slugs.3', message: 'a lower snake_case metric slug' },
      { path: 'slugs.4', message: 'a lower snake_case metric slug: ebitda_margin, not EBITDAMargin' },
      // Capitals alone: which words, the refusal cannot tell.
      { path: 'slugs.5', message: 'a lower snake_case metric slug' },
    ]);
  });

  it('when an argument is invalid then an invalid_params error result lists the path, so the model can fix it', async () => {
    const result = await call('service_get_company_metrics', { fiscalCode: 'nope', years: ['2023'] });
    expect(result.isError).toBe(true);
    const error = (result.structuredContent as any).error;
    expect(error.code).toBe('invalid_params');
    expect(error.details.map((d: any) => d.path).sort()).toEqual(['fiscalCode', 'years.0']);
    expect((result.content[0] as { text: string }).text).toContain('fiscalCode');
  });

  it('when the arguments are invalid and the allowance is exhausted then the caller learns about the arguments first, as on the API', async () => {
    const broke = await createToolOrganization(mcp.db);
    await mcp.db('allowances').where({ organization_id: broke.organizationId }).update({ credits_exhausted: true });
    const brokeClient = await connectClient(mcp.mcpUrl, broke.key);
    try {
      const bad = (await brokeClient.callTool({ name: 'service_get_company_metrics', arguments: { fiscalCode: '1' } })) as CallToolResult;
      expect((bad.structuredContent as any).error).toMatchObject({ code: 'invalid_params', details: [{ path: 'fiscalCode' }] });
      const good = (await brokeClient.callTool({ name: 'service_get_company_metrics', arguments: { fiscalCode: group.root.fiscalCode } })) as CallToolResult;
      expect((good.structuredContent as any).error.code).toBe('credits_exhausted');
    } finally {
      await brokeClient.close();
    }
  });

  it('when a company\'s name or a search result\'s id is passed as fiscalCode then the refusal says to find the code with the search tool; a slip keeps its own hint', async () => {
    for (const [tool, fiscalCode] of [['service_get_company_structure', 'Grasso Holding'], ['service_get_company_metrics', '16'], ['service_analyze_company', 'gallo']] as const) {
      const error = ((await call(tool, { fiscalCode })).structuredContent as any).error;
      expect(error.details, tool).toEqual([{ path: 'fiscalCode', message: 'must be an 11-digit code or a 16-character codice fiscale. To find a company by its name, call service_search_companies and pass the fiscalCode of a result (not its id).' }]);
    }
    const slip = ((await call('service_get_company_structure', { fiscalCode: `IT${group.root.fiscalCode}` })).structuredContent as any).error;
    expect(slip.details).toEqual([{ path: 'fiscalCode', message: `must be an 11-digit code or a 16-character codice fiscale; drop the IT prefix: ${group.root.fiscalCode}` }]);
  });

  it('when the municipality is no comune then the search is refused with the nearest, unbilled; one written in English finds the comune\'s companies', async () => {
    const refused = (await call('service_search_companies', { query: group.token, municipality: 'Reggio Emila' })).structuredContent as any;
    expect(refused.error).toMatchObject({ code: 'invalid_params', details: [{ path: 'municipality', message: expect.stringMatching(/^no comune is named "Reggio Emila": did you mean Reggio nell'Emilia\b/) }] });
    expect(await usageEvents(refused.error.requestId)).toEqual([]);
    // The group's companies are in Milano.
    const inMilan = data(await call('service_search_companies', { query: group.token, municipality: 'Milan', limit: 50 }));
    expect(inMilan.items.map((i: any) => i.fiscalCode).sort()).toEqual(group.all.map((d) => d.fiscalCode).sort());
  });

  it('when optional arguments are sent as null (as strict function calling sends those left out) then they are read as left out; a required one null is required', async () => {
    const asOmitted = data(await call('service_search_companies', { query: group.token, limit: 5 }));
    const withNulls = data(await call('service_search_companies', { query: group.token, province: null, naceSection: null, status: null, limit: 5, cursor: null }));
    expect(withNulls.items.map((i: any) => i.fiscalCode)).toEqual(asOmitted.items.map((i: any) => i.fiscalCode));
    expect(withNulls.items.length).toBe(5);
    const required = (await call('service_get_company_structure', { fiscalCode: null, depthUp: null })).structuredContent as any;
    expect(required.error.details).toEqual([{ path: 'fiscalCode', message: 'required: a string' }]);
    // A null inside a list is a wrong value, not an argument left out.
    const inList = (await call('service_get_company_metrics', { fiscalCode: group.root.fiscalCode, slugs: [null] })).structuredContent as any;
    expect(inList.error.details).toEqual([{ path: 'slugs.0', message: expect.stringMatching(/^Invalid input: expected string, received null/) }]);
  });

  it('when a required argument is left out then its detail says it is required, beside one for an argument the tool does not take, and nothing is billed', async () => {
    // taxId for fiscalCode: the slip a docs walkthrough made.
    const result = await call('service_get_company_structure', { taxId: group.root.fiscalCode });
    const error = (result.structuredContent as any).error;
    expect(error.code).toBe('invalid_params');
    expect(error.details).toEqual([
      { path: 'fiscalCode', message: 'required: a string' },
      { path: 'taxId', message: expect.stringMatching(/^not an argument of this tool, which takes fiscalCode, /) },
    ]);
    expect((result.content[0] as { text: string }).text).toContain('- fiscalCode: required: a string');
    // A wrong type where the argument was given is said as before.
    const wrongType = (await call('service_get_company_structure', { fiscalCode: 12345678901 })).structuredContent as any;
    expect(wrongType.error.details).toEqual([{ path: 'fiscalCode', message: expect.stringMatching(/^Invalid input: expected string, received number/) }]);
    expect(await usageEvents(error.requestId)).toHaveLength(0);
  });

  it('when arguments the tool does not take are sent then each is one invalid_params detail whose path is its name, and nothing is billed', async () => {
    const result = await call('service_search_companies', { query: 'rossi', unknownField: 1, fiscalCode: group.root.fiscalCode });
    const error = (result.structuredContent as any).error;
    expect(error.code).toBe('invalid_params');
    expect(error.details).toEqual([
      { path: 'unknownField', message: expect.stringMatching(/^not an argument of this tool, which takes query, .*limit/) },
      { path: 'fiscalCode', message: expect.stringMatching(/^not an argument of this tool/) },
    ]);
    expect((result.content[0] as { text: string }).text).toContain('- unknownField: not an argument');
    expect(await usageEvents(error.requestId)).toHaveLength(0);
  });

  it('when the company search is sent a revenue or headcount filter or a sort then the refusal says it has none and what to use instead, and nothing is billed', async () => {
    const result = await call('service_search_companies', { municipality: 'Milano', minRevenue: 10_000_000, employees_min: 50, sortBy: 'revenue', color: 'red' });
    const error = (result.structuredContent as any).error;
    expect(error.code).toBe('invalid_params');
    const takes = expect.stringMatching(/^not an argument of this tool, which takes query, /);
    expect(error.details).toEqual([
      { path: 'minRevenue', message: expect.stringMatching(/; it filters by neither revenue nor headcount: size is the EU SME class both set, and each result has latestRevenue and latestEmployees to filter by$/) },
      { path: 'employees_min', message: expect.stringMatching(/; it filters by neither revenue nor headcount/) },
      { path: 'sortBy', message: expect.stringMatching(/; results come best match first, or by legal name without a query: there is no other order$/) },
      { path: 'color', message: takes },
    ]);
    expect(error.details[3].message).not.toContain(';');
    expect(await usageEvents(error.requestId)).toHaveLength(0);
  });

  it('when a search text holds a NUL or half of a character (an unpaired surrogate) then an invalid_params error result names the field, not billed, rather than a store failure or a search for other text', async () => {
    const halfCharacter = 'holds an unpaired UTF-16 surrogate (\\ud800): the text was cut inside a character; fix or remove it';
    for (const [tool, args, path, message] of [
      ['service_search_companies', { query: 'Ro\u0000ssi' }, 'query', 'must not contain the NUL character (U+0000)'],
      ['service_search_companies', { municipality: 'Mi\u0000lano' }, 'municipality', 'must not contain the NUL character (U+0000)'],
      ['service_search_people', { name: 'Ro\u0000ssi' }, 'name', 'must not contain the NUL character (U+0000)'],
      // Postgres would have searched for U+FFFD in its place, and the call been billed.
      ['service_search_companies', { query: '\ud800ab' }, 'query', halfCharacter],
      ['service_search_companies', { municipality: 'Milano\ud800' }, 'municipality', halfCharacter],
      ['service_search_people', { name: 'ro\ud800ssi' }, 'name', halfCharacter],
    ] as const) {
      const error = ((await call(tool, args)).structuredContent as any).error;
      expect(error.code, `${tool} ${path}`).toBe('invalid_params');
      expect(error.details, `${tool} ${path}`).toEqual([{ path, message }]);
      expect(await usageEvents(error.requestId)).toHaveLength(0);
    }
  });
});

describe('an Italian code typed wrong', () => {
  it('when a code lost its leading zero, carries an IT prefix or has a check digit that cannot match then the tools say how to fix it, as the API does', async () => {
    const code = makePartitaIva(randomInt(1, 1_000_000), 15); // below 1,000,000: a leading zero
    const tenDigits = code.slice(1);
    const wrongDigit = `${code.slice(0, 10)}${(Number(code[10]) + 1) % 10}`;
    const errorOf = async (name: string, args: Record<string, unknown>) => {
      const result = await call(name, args);
      expect(result.isError).toBe(true);
      return { error: (result.structuredContent as any).error, text: (result.content[0] as { text: string }).text };
    };

    const lostZero = `it has 10 digits: a leading zero may have been lost (${code})`;
    const profile = await errorOf('service_get_company_profile', { taxId: tenDigits });
    expect(profile.error).toMatchObject({ code: 'not_found', message: `No company has the tax ID "${tenDigits}"; ${lostZero}.` });
    const shape = 'must be an 11-digit code or a 16-character codice fiscale';
    const structure = await errorOf('service_get_company_structure', { fiscalCode: tenDigits });
    expect(structure.error).toMatchObject({ code: 'invalid_params', details: [{ path: 'fiscalCode', message: `${shape}; ${lostZero}` }] });
    const metrics = await errorOf('service_get_company_metrics', { fiscalCode: `IT${code}` });
    expect(metrics.error).toMatchObject({ code: 'invalid_params', details: [{ path: 'fiscalCode', message: `${shape}; drop the IT prefix: ${code}` }] });
    // The model reads the text: the hint is in it.
    expect(metrics.text).toContain(`- fiscalCode: ${shape}; drop the IT prefix: ${code}`);
    const analysis = await errorOf('service_analyze_company', { fiscalCode: wrongDigit });
    expect(analysis.error).toMatchObject({ code: 'not_found', message: `No company has the fiscal code ${wrongDigit}; its check digit does not match: it is mistyped, not a company we lack.` });
  });
});

describe('service_analyze_company', () => {
  it('when the company is analysed then figures are computed from the report\'s values and name their inputs', async () => {
    const a = data(await call('service_analyze_company', { fiscalCode: group.root.fiscalCode }));
    const latest = rootReport.financials[0]!;
    const value = (slug: string) => latest.metrics.find((m) => m.slug === slug)!.value;
    const margin = a.profitability.find((r: any) => r.key === 'ebitda_margin');
    expect(margin.value).toBeCloseTo(value('ebitda') / value('revenue'), 4);
    expect(margin.inputs).toEqual([{ slug: 'ebitda', year: latest.year, value: value('ebitda') }, { slug: 'revenue', year: latest.year, value: value('revenue') }]);
    expect(margin.trend).toBe('stable');
    const growth = a.growth.find((g: any) => g.key === 'revenue_growth');
    expect(growth.value).toBe(latest.metrics.find((m) => m.slug === 'revenue')!.yoyChange);
    const current = a.liquidity.find((r: any) => r.key === 'current_ratio');
    expect(current.value).toBeCloseTo(value('total_current_assets') / value('debts_due_within_one_year'), 4);
    expect(a.solvency.find((r: any) => r.key === 'equity_ratio').value).toBeCloseTo(value('total_equity') / value('total_assets'), 4);
    expect(a.stateAids).toMatchObject({ count: 2, amountLast36Months: 25_000 });
    expect(a.unknownRiskIndicators).toEqual(['assetEncumbrances']);
    expect(a.peers.naceDivision).toBe('62');
    expect(a.peers.peerCount).toBeGreaterThanOrEqual(2);
    // Active peers only: the group's dissolved company, in the same division, is not one.
    const inDivision = (dissolvedToo: boolean) => mcp.db('companies').whereRaw("substring(nace_code from 1 for 2) = '62'").whereNot({ fiscal_code: group.root.fiscalCode })
      .whereNotNull('latest_filed_year').modify((q) => { if (!dissolvedToo) q.whereNull('dissolution_year'); }).count<{ count: string }[]>('* as count');
    expect(a.peers.peerCount).toBe(Number((await inDivision(false))[0]!.count));
    expect(Number((await inDivision(true))[0]!.count)).toBeGreaterThan(a.peers.peerCount);
    const revenueStanding = a.peers.comparisons.find((c: any) => c.key === 'revenue');
    expect(revenueStanding.percentile).toBeGreaterThan(0.5); // the largest of its group
  });

  it('when a dissolved company is analysed then the dissolution is a high-severity flag', async () => {
    const a = data(await call('service_analyze_company', { fiscalCode: group.subs[2]!.fiscalCode }));
    expect(a.riskFlags).toContainEqual(expect.objectContaining({ code: 'dissolved', severity: 'high', source: 'registry' }));
  });
});

describe('person-only tools on a key connection', () => {
  it('when any of the five person tools is called then the error result says it needs a signed-in user and that this server takes organization keys only, promising no sign-in', async () => {
    for (const name of personOnlyTools) {
      const result = await call(name, {});
      expect(result.isError).toBe(true);
      const error = (result.structuredContent as any).error;
      expect(error.code).toBe('not_entitled');
      expect(error.message).toContain(`${name} needs a signed-in user`);
      expect(error.message).toContain('accepts organization API keys only');
      expect(error.message).not.toMatch(/OAuth|signs in|sign in/i);
      expect(await usageEvents(error.requestId)).toHaveLength(0);
    }
    // Indeed there is none to offer: no OAuth metadata, no authorization endpoint.
    for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-authorization-server', '/authorize']) {
      expect((await fetch(`${mcp.url}${path}`)).status).toBe(404);
    }
  });
});

describe('billing of tool calls', () => {
  it('when a tool call succeeds then exactly one usage event with source mcp, the tool name and the plan measure is recorded before the answer', async () => {
    const result = await call('service_get_company_profile', { taxId: group.root.fiscalCode });
    data(result);
    const requestId = (result._meta as any).requestId;
    expect((result._meta as any).usage).toEqual({ quantity: 8, unit: 'credits' });
    const events = await usageEvents(requestId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ eventId: requestId, organizationId: org.organizationId, keyId: org.keyId, source: 'mcp', product: 'service_get_company_profile', quantity: 8, unit: 'credits' });
  });

  it('when the usage of a successful call is applied then the organization\'s report (cli report) shows it under source mcp and the tool', async () => {
    const result = await call('service_search_people', { name: `Marco ${group.token} Bellini` });
    data(result);
    const requestId = (result._meta as any).requestId;
    const [event] = await usageEvents(requestId);
    // Apply it as the billing worker does; if a worker of another test file already did, this is a no-op.
    await mcp.db.transaction((trx) => applyUsageBatch(trx, [{ value: { v: 1, occurredAt: new Date().toISOString(), ...event }, ref: 'mcp-test' }], { bus: 'postgres' }));
    const report = await buildAllowanceReport(mcp.db, org.organizationId, new Date().toISOString().slice(0, 7));
    expect(report.byProduct).toContainEqual(expect.objectContaining({ source: 'mcp', product: 'service_search_people', quantity: 1, unit: 'credits', calls: 1 }));
  });

  it('when an agent calls tools one after another, faster than the worker applies them, then it cannot spend past its balance', async () => {
    // No worker runs here: each served call's event stays on the bus, unapplied.
    const small = await createToolOrganization(mcp.db);
    await mcp.db('allowances').where({ organization_id: small.organizationId }).update({ credits_balance: 6 });
    const agent = await connectClient(mcp.mcpUrl, small.key);
    try {
      const outcome = async (name: string, args: Record<string, unknown>) => {
        const result = (await agent.callTool({ name, arguments: args })) as CallToolResult;
        return result.isError ? (result.structuredContent as any).error.code : 'ok';
      };
      // 6 credits: the structure (5) and one search (1), and then nothing.
      expect([
        await outcome('service_get_company_structure', { fiscalCode: group.root.fiscalCode }),
        await outcome('service_search_companies', { query: group.token }),
        await outcome('service_search_companies', { query: group.token }),
      ]).toEqual(['ok', 'ok', 'credits_exhausted']);
    } finally {
      await agent.close();
    }
  });

  it('when an agent sends a batch of calls its balance covers only some of, then only those are served, on one connection and one request', async () => {
    const small = await createToolOrganization(mcp.db);
    await mcp.db('allowances').where({ organization_id: small.organizationId }).update({ credits_balance: 12 });
    // Five structure calls (5 credits each) at once on 12 credits: two fit.
    const batch = Array.from({ length: 5 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'service_get_company_structure', arguments: { fiscalCode: group.root.fiscalCode } } }));
    const res = await rpc(mcp.mcpUrl, batch, { Authorization: `Bearer ${small.key}` });
    const answers = (await json(res)) as { result: { isError?: boolean; structuredContent: any } }[];
    const outcomes = answers.map((a) => (a.result.isError ? a.result.structuredContent.error.code : 'ok')).sort();
    expect(outcomes).toEqual(['credits_exhausted', 'credits_exhausted', 'credits_exhausted', 'ok', 'ok']);
    expect(await eventsOnBus(mcp.db, { organizationId: small.organizationId })).toHaveLength(2);
  });

  it('when a tool call is answered as JSON then it carries the organization\'s RateLimit headers, like the API', async () => {
    const res = await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'service_search_companies', arguments: { query: group.token } } }, { Authorization: `Bearer ${org.key}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-limit')).toBe('1000');
    expect(Number(res.headers.get('ratelimit-remaining'))).toBeLessThan(1000);
    expect((await json(res)).result.structuredContent.items.length).toBe(group.all.length);
  });

  it('when a tools/call carries a task (2025-11-25 task augmentation) then, as the server declares no tasks capability, it is answered and billed as a plain call, alone, in a batch or as SSE', async () => {
    const message = (id: number) => ({
      jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'service_analyze_company', arguments: { fiscalCode: group.root.fiscalCode }, task: { ttl: 1000 } },
    });
    const headers = { Authorization: `Bearer ${org.key}`, 'Mcp-Protocol-Version': '2025-11-25' };
    const sse = async (res: Response) => (await res.text()).split('\n').filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    const answers = [
      await json(await rpc(mcp.mcpUrl, message(1), headers)),
      ...((await json(await rpc(mcp.mcpUrl, [message(2), { jsonrpc: '2.0', id: 3, method: 'tools/list', params: { task: {} } }], headers))) as any[]),
      ...(await sse(await rpc(mcp.mcpUrl, message(4), { ...headers, Accept: 'text/event-stream, application/json' }))),
    ];
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3, 4]);
    for (const answer of answers) expect(answer.error, JSON.stringify(answer.error)).toBeUndefined();
    expect(answers.find((a) => a.id === 3).result.tools.length).toBeGreaterThan(0);
    for (const answer of answers.filter((a) => a.id !== 3)) {
      expect(answer.result.task).toBeUndefined();
      expect(answer.result.structuredContent.company.fiscalCode).toBe(group.root.fiscalCode);
      expect(await usageEvents(answer.result._meta.requestId)).toEqual([expect.objectContaining({ product: 'service_analyze_company', quantity: 10, unit: 'credits' })]);
    }
  });

  it('when initialize and tools/list are sent then nothing is billed', async () => {
    const res = await rpc(mcp.mcpUrl, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { Authorization: `Bearer ${org.key}` });
    expect(res.status).toBe(200);
    expect((await json(res)).result.tools.length).toBeGreaterThan(0);
    expect(await usageEvents(res.headers.get('x-request-id')!)).toHaveLength(0);
  });
});

// A lone tools/call is answered by the tool handlers directly (mcp/direct-tool-call.ts); the same
// call in a batch of one still goes through the SDK's Server. Both must write the same answer,
// byte for byte apart from the request ids: successes, error results and JSON-RPC errors.
describe('a lone tools/call answered without the SDK\'s Server', () => {
  const sameAnswer = async (params: { name: string; arguments?: Record<string, unknown> }) => {
    const message = { jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params };
    const headers = { Authorization: `Bearer ${org.key}`, 'Mcp-Protocol-Version': '2025-06-18' };
    const [lone, batch] = await Promise.all([rpc(mcp.mcpUrl, message, headers), rpc(mcp.mcpUrl, [message], headers)]);
    expect([lone.status, batch.status]).toEqual([200, 200]);
    const [loneText, batchText] = await Promise.all([lone.text(), batch.text()]);
    const withoutIds = (text: string) => text.replace(/req_[0-9a-f-]{36}/g, 'req_*');
    expect(batchText.startsWith('[') && batchText.endsWith(']')).toBe(true);
    expect(withoutIds(loneText)).toBe(withoutIds(batchText.slice(1, -1)));
    // The lone answer names its own request, as every answer does.
    expect(loneText).toContain(lone.headers.get('x-request-id'));
    return JSON.parse(loneText);
  };

  it('when the call succeeds then the answer is the Server\'s, the profile included', async () => {
    const body = await sameAnswer({ name: 'service_get_company_profile', arguments: { taxId: group.root.fiscalCode } });
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 'call-1', result: { structuredContent: { profile: { identity: { fiscalCode: group.root.fiscalCode } } } } });
  });

  it('when the arguments are invalid, the company unknown or the tool person-only then the error results are the Server\'s', async () => {
    expect((await sameAnswer({ name: 'service_get_company_profile', arguments: { taxId: '' } })).result.structuredContent.error.code).toBe('invalid_params');
    expect((await sameAnswer({ name: 'service_get_company_profile', arguments: { taxId: '00000000000' } })).result.structuredContent.error.code).toBe('not_found');
    expect((await sameAnswer({ name: personOnlyTools[0]! })).result.structuredContent.error.code).toBe('not_entitled');
  });

  it('when the arguments hold a key named __proto__ then both paths refuse it by name as invalid_params, and nothing is billed', async () => {
    // As JSON.parse reads the caller's body: an own property named __proto__, not a prototype.
    for (const args of ['{"query":"rossi","__proto__":{"limit":1}}', '{"query":"rossi","__proto__":1}']) {
      const body = await sameAnswer({ name: 'service_search_companies', arguments: JSON.parse(args) });
      const error = body.result.structuredContent.error;
      expect(error, args).toMatchObject({ code: 'invalid_params', details: [{ path: '__proto__', message: expect.stringMatching(/^not an argument of this tool, which takes query/) }] });
      expect(await usageEvents(error.requestId)).toEqual([]);
    }
  });

  it('when the tool is unknown then the JSON-RPC error is the Server\'s', async () => {
    const body = await sameAnswer({ name: 'service_no_such_tool', arguments: {} });
    expect(body.error).toMatchObject({ code: -32602, data: { code: 'unknown_endpoint' } });
  });
});
