import { z } from 'zod';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  CallToolRequestSchema, ListToolsRequestSchema, type CallToolRequest, type CallToolResult, type JSONRPCMessage, type ListToolsResult, type RequestId, type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { countMalformedAttempt, type AccessControl, type Grant, type Measure, type Principal } from '../core/access/index.js';
import type { CompanyStore } from '../core/companies/index.js';
import type { Db } from '../core/db/index.js';
import { AppError, errorObjectSchema, issueDetails } from '../core/errors/index.js';
import type { Logger } from '../core/logging/index.js';
import { rateLimitHeaders } from '../core/ratelimit/index.js';
import { occurredNow, type UsageSink } from '../core/usage/index.js';
import { argumentDetails } from './argument-details.js';
import { jsonWithCachedParts, type CachedText } from './cached-json.js';
import { withCanonicalEnums } from './canonical-enums.js';
import { compactOutputSchema } from './compact-json-schema.js';
import { protocolError, toolErrorResult } from './errors.js';
import { withFindByNameHint } from './find-by-name-hint.js';
import { withoutOptionalNulls } from './optional-nulls.js';
import { personOnlyToolMessage, personOnlyToolNames, toolDefinitions, type ToolDefinition } from './tools/index.js';

// One MCP server per HTTP request (stateless: nothing is kept between requests, so instances
// scale behind a plain load balancer, and no server object is shared across transports, which
// the SDK does not support: typescript-sdk issue #912). A lone tools/call skips the server and
// calls the same handlers (createToolHandlers, direct-tool-call.ts).
//
// We use the SDK's low-level Server with our own tools/list and tools/call handlers rather
// than McpServer.registerTool: McpServer answers invalid arguments and unknown or disabled
// tools with plain text, while we must return structuredContent.error with our code and
// requestId for every failure, list tools per organization, and bill exactly the calls that
// succeed. The zod schemas of each tool are still the single contract: they validate the
// arguments here, type run()'s result (checked against them in the tests, not per call) and
// become the JSON Schemas that tools/list shows.

export interface McpDeps {
  access: AccessControl;
  usage: UsageSink;
  store: CompanyStore;
  db: Db;
  queryTimeoutMs: number;
  logger: Logger;
  /** Reported in initialize's serverInfo. */
  version: string;
  /** The company cache's `serialised`: cached data in a result is spliced into its JSON text
   * instead of being serialised again on every call. */
  cachedText?: CachedText;
}

/** What every per-request server shares, built once per app: the tools' JSON Schemas and a validator. */
export interface ServerParts {
  tools: PreparedTool[];
  byName: Map<string, PreparedTool>;
  // The SDK builds a fresh Ajv (and its formats) for each Server unless given one: that cost
  // per stateless request dominated a tool call. It only validates elicitation answers, which
  // this server never asks for; one shared instance is plenty.
  jsonSchemaValidator: AjvJsonSchemaValidator;
  /** initialize's instructions naming every tool, written from the tools' schemas (see instructionsFor). */
  instructions: string;
}

export function prepareServerParts(definitions: ToolDefinition<any, any>[] = toolDefinitions): ServerParts {
  const tools = prepareTools(definitions);
  return {
    tools,
    byName: new Map(tools.map((t) => [t.definition.name as string, t])),
    jsonSchemaValidator: new AjvJsonSchemaValidator(),
    instructions: serverInstructions(definitions),
  };
}

/** A tool with its JSON Schemas computed once per process, not per request. */
export interface PreparedTool {
  definition: ToolDefinition<any, any>;
  inputJsonSchema: Tool['inputSchema'];
  outputJsonSchema: NonNullable<Tool['outputSchema']>;
}

export interface McpCall {
  principal: Principal;
  /** The HTTP request's id for the first JSON-RPC request it carries, fresh ids after (batches). */
  nextRequestId(): string;
  /** Adds response headers; every answer's are sent after its calls have run, JSON or event stream. */
  setHeaders(headers: Record<string, string>): void;
  /** Whether the caller closed the connection, so no answer can reach it (core/http-server/caller-gone.ts). */
  callerGone(): boolean;
  /**
   * Whether the JSON-RPC request of this id will not get its result in the answer: a
   * `notifications/cancelled` of the same batch names it, or the answer went without it
   * (JsonResponseTransport.isCancelled). Such a call is not charged, as when the caller is gone.
   */
  cancelled(id: RequestId): boolean;
  /**
   * Just before a tool call publishes its usage event: false when cancelled(id) is true (the
   * call must not be charged), else true, and the answer will now carry the call's own answer,
   * however late (JsonResponseTransport.commitToCharge). The call must then publish at once,
   * with no await in between, so that the deadline cannot fall between the check and the
   * publish. Always true outside a batch.
   */
  commitToCharge(id: RequestId): boolean;
}

// The error branch of every tool's output schema: the API's error object, described in its
// JSON Schema as the results are, for the model (what the API's OpenAPI document says of it is
// about path parameters and HTTP statuses).
const errorFields = errorObjectSchema.shape;
const detailSchema = errorFields.details.unwrap().element;
const toolErrorSchema = z.strictObject({
  error: errorObjectSchema.extend({
    // The enum lists the codes, and every tool's schema carries this branch: no examples repeated here.
    code: errorFields.code.describe('Stable, machine-readable error code, as the API\'s.'),
    message: errorFields.message.describe('What went wrong and what to do about it; the text content says the same.'),
    requestId: errorFields.requestId.describe('Id of the call, also in `_meta.requestId`: quote it to support.'),
    details: z.array(detailSchema.extend({
      path: detailSchema.shape.path.describe('The argument\'s path, e.g. `fiscalCode` or `years.0`; for an argument the tool does not take, its name.'),
      message: detailSchema.shape.message.describe('What is wrong with it.'),
    }).describe('One argument that failed validation.')).optional().describe('Only for invalid_params: one item per argument that failed validation.'),
  }).describe('Why the call failed, shaped like the API\'s error object.'),
}).describe('A failed call (`isError: true`), which is not billed.');

// Draft-07, as the SDK's own conversion targets: what MCP clients' validators (ajv) expect.
const jsonSchemaOf = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { target: 'draft-7', io }) as Record<string, unknown>;

export function prepareTools(definitions: ToolDefinition<any, any>[] = toolDefinitions): PreparedTool[] {
  return definitions.map((definition) => ({
    definition,
    inputJsonSchema: { ...jsonSchemaOf(definition.inputSchema, 'input'), type: 'object' } as Tool['inputSchema'],
    // A failed call also returns structuredContent ({ error }), and clients such as the SDK's
    // validate structuredContent against outputSchema even on errors: the schema names both.
    // Compacted (compact-json-schema.ts): tools/list goes into every agent's context.
    outputJsonSchema: { ...compactOutputSchema(jsonSchemaOf(z.union([definition.outputSchema, toolErrorSchema]), 'output')), type: 'object' } as NonNullable<Tool['outputSchema']>,
  }));
}

// The arguments that name one company, as the tools' input schemas call them.
const companyArguments = ['taxId', 'fiscalCode'] as const;

// How initialize tells an agent to find what the company tools take, per search tool.
const finders: Record<string, string> = {
  service_search_companies: 'a company with service_search_companies (by name, fiscal code or VAT number)',
  service_search_people: 'a person with service_search_people',
};
const orList = (items: string[]) => (items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items.at(-1)}`);

/**
 * What initialize tells an agent, naming only `definitions` (the tools the caller may use: a
 * model told of a tool that tools/list leaves out calls it and loses a turn). The company tools
 * are grouped by the argument that takes the fiscal code, read from their input schemas, so the
 * text cannot name an argument a tool does not take (an agent following it would get
 * "Unrecognized key").
 */
function serverInstructions(definitions: ToolDefinition<any, any>[]): string {
  const about = 'Italian company data: identity, registry, risk indicators, ownership, officers and filed financial statements. ';
  // Plans are ours to set, not the organization's administrators' (client_not_configured and
  // not_entitled send the caller to the account manager too): one text for no plan and a plan without tools.
  if (definitions.length === 0) return `${about}Your organization's plan includes none of these tools yet, so tools/list is empty: ask your account manager about a plan that includes them.`;
  const byArgument = companyArguments.flatMap((argument) => {
    const names = definitions.filter((d) => argument in d.inputSchema.shape).map((d) => d.name as string);
    return names.length === 0 ? [] : [`to ${orList(names)} as ${argument}`];
  });
  const find = definitions.flatMap((d) => finders[d.name] ?? []);
  const steps = byArgument.length === 0
    ? `Find ${orList(find)}.`
    : `${find.length === 0 ? 'Pass a' : `Find ${orList(find)}, then pass the`} company's fiscalCode ${byArgument.join(', and ')}.`;
  return `${about}${steps} Each successful tool call is billed to your organization as its description says; failed calls are free.`;
}

/**
 * initialize's instructions for this caller: the tools its organization's plan includes, as
 * tools/list shows them. When the plan cannot be read now, though it could when the request was
 * counted (http.ts refuses the request otherwise), the text for every tool: initialize still
 * succeeds, and tools/list then says what is wrong.
 */
export async function instructionsFor(deps: McpDeps, parts: ServerParts, principal: Principal): Promise<string> {
  try {
    const entitled = await deps.access.entitlements(principal, 'tool');
    return serverInstructions(parts.tools.map((t) => t.definition).filter((d) => entitled.has(d.name)));
  } catch {
    return parts.instructions;
  }
}

const measureText = (m: Measure) => `${m.quantity} ${m.quantity === 1 ? m.unit.replace(/s$/, '') : m.unit}`;

/** The two tool methods' handlers for one HTTP request: what the SDK's Server dispatches to,
 * and what http.ts calls directly for a plain tools/call (see answerToolCall). */
export interface ToolHandlers {
  listTools(): Promise<ListToolsResult>;
  /** `batch`: what its batch says of it (McpCall's for its id); a plain tools/call cannot be cancelled. */
  callTool(request: CallToolRequest, batch?: CallInBatch): Promise<CallToolResult>;
}

/** A tools/call's standing in its batch: McpCall.cancelled and McpCall.commitToCharge for its request id. */
export interface CallInBatch {
  cancelled(): boolean;
  commitToCharge(): boolean;
}

const alone: CallInBatch = { cancelled: () => false, commitToCharge: () => true };

export function createToolHandlers(deps: McpDeps, parts: ServerParts, call: McpCall): ToolHandlers {
  const { tools } = parts;
  const { principal } = call;
  const log = deps.logger.child({ organizationId: principal.organizationId, keyId: principal.keyId });
  // For a tool's hint that names another tool (ToolContext.mayCall): read from the plan
  // authorize has just read (cached), only when such a hint is written. A plan that cannot be
  // read now counts as including it: a hint saying the plan lacks the tool could be false, while
  // the other tool's own answer will say what holds (entitlement_unavailable, to retry, if the
  // plan still cannot be read). The call's own answer (a not_found) stays what it is.
  const mayCall = async (tool: string): Promise<boolean> => {
    try {
      return (await deps.access.entitlements(principal, 'tool')).has(tool);
    } catch {
      return true;
    }
  };

  return {
    async listTools() {
      const requestId = call.nextRequestId();
      let entitled: Map<string, Measure>;
      try {
        entitled = await deps.access.entitlements(principal, 'tool');
      } catch (err) {
        throw protocolError(err, requestId, log);
      }
      return {
        tools: tools.flatMap(({ definition: d, inputJsonSchema, outputJsonSchema }) => {
          const measure = entitled.get(d.name);
          if (!measure) return [];
          return [{
            name: d.name,
            title: d.title,
            description: `${d.description}\n\nUsage: each successful call records ${measureText(measure)} for your organization; failed calls are free.`,
            inputSchema: inputJsonSchema,
            outputSchema: outputJsonSchema,
            annotations: d.annotations,
          }];
        }),
      };
    },

    async callTool(request, batch = alone) {
      const requestId = call.nextRequestId();
      const name = request.params.name;
      const toolLog = log.child({ requestId, tool: name });
      if (personOnlyToolNames.has(name)) return toolErrorResult(new AppError('not_entitled', personOnlyToolMessage(name)), requestId, toolLog);
      const tool = parts.byName.get(name);
      if (!tool) {
        throw protocolError(new AppError('unknown_endpoint', `Unknown tool: ${name.slice(0, 100)}. Call tools/list for the tools this key can use.`), requestId, toolLog);
      }
      const { definition } = tool;
      let grant: Grant | undefined;
      // A result nobody will receive: the charge held for it is released.
      const notCharged = (held: Grant, why: 'gone' | 'cancelled'): CallToolResult => {
        deps.access.release(held);
        const text = why === 'gone'
          ? 'Not sent: the caller closed the connection before the result was ready. Not charged.'
          : 'Not sent: the call was cancelled (notifications/cancelled) before its result was ready. Not charged.';
        toolLog.info(why === 'gone' ? 'the caller closed the connection before the result was ready: not sent, not charged' : 'the call was cancelled, or its batch answered without it, before its result was ready: not sent, not charged');
        return { _meta: { requestId }, content: [{ type: 'text', text }], isError: true };
      };
      try {
        // As on the API: the caller learns about malformed arguments first, whatever the plan
        // or the allowance says; the attempt still counts against the rate limit and carries
        // its headers. Then admission (rate limit shared with the API, plan, flags): a refused
        // call does no work.
        const args = withCanonicalEnums(definition.inputSchema, withoutOptionalNulls(definition.inputSchema, request.params.arguments ?? {}));
        const parsed = definition.inputSchema.safeParse(args);
        if (!parsed.success) {
          const counted = await countMalformedAttempt(deps.access, principal, name, 'tool');
          throw new AppError('invalid_params', `The arguments do not match the input schema of ${name}.`, {
            details: await withFindByNameHint(argumentDetails(parsed.error.issues, definition.inputSchema, args, definition.unknownArgumentHint), mayCall),
            headers: counted,
          });
        }
        // The charge is held from here (for an organization near its balance), so the calls of
        // one batch are judged against each other's; released below if this one fails.
        grant = await deps.access.authorize(principal, name, 'tool', requestId);
        call.setHeaders(rateLimitHeaders(grant.rateLimit));
        // A call cancelled in its own batch does no work; it was still counted, as every call is.
        if (batch.cancelled()) return notCharged(grant, 'cancelled');
        const output = await definition.run(parsed.data, { requestId, store: deps.store, companies: { db: deps.db, queryTimeoutMs: deps.queryTimeoutMs, logger: toolLog }, mayCall });
        // The output schema is not checked here: run() is typed by it, and test/mcp-tools.test.ts
        // checks every tool's results against it. Parsing a 1–50 KB result on every call cost
        // about 5% of a profile call's CPU, and would also copy the cached data it returns.
        // The caller hung up while the tool ran: nobody can receive the result, so it is not
        // charged (core/http-server/caller-gone.ts); a batch's later calls are skipped likewise.
        // The same for a call cancelled, or given up (JsonResponseTransport's deadline), before
        // it commits to its usage event. Committed, it is never given up: the batch's answer
        // waits for this call's own, the result or publish's refusal, so a call answered with an
        // error is never charged. Nothing is awaited between the commitment and the publish, so
        // the deadline cannot fall between them.
        if (call.callerGone()) return notCharged(grant, 'gone');
        if (!batch.commitToCharge()) return notCharged(grant, 'cancelled');
        // Billed before the result is sent, and only then: publish resolves once the event is durable.
        await deps.usage.publish({
          v: 1,
          eventId: requestId,
          organizationId: principal.organizationId,
          keyId: principal.keyId,
          source: 'mcp',
          product: name,
          quantity: grant.measure.quantity,
          unit: grant.measure.unit,
          occurredAt: occurredNow(),
        });
        deps.access.charged(grant, requestId);
        const structured = output as Record<string, unknown>;
        // Keys in the order of the SDK's CallToolResultSchema, in which the Server writes them:
        // a plain tools/call answered directly (direct-tool-call.ts) gives the same bytes.
        return {
          _meta: { requestId, usage: { quantity: grant.measure.quantity, unit: grant.measure.unit } },
          // The same JSON as JSON.stringify(structured), with cached parts (a profile) spliced in.
          content: [{ type: 'text', text: jsonWithCachedParts(structured, deps.cachedText, 1) }],
          structuredContent: structured,
        };
      } catch (err) {
        if (grant) deps.access.release(grant);
        // Refusals after authentication carry the RateLimit-* headers too.
        if (err instanceof AppError && err.headers) call.setHeaders(err.headers);
        return toolErrorResult(err, requestId, toolLog);
      }
    },
  };
}

/**
 * Whether callTool admits a call of this tool through access.authorize, which counts it against
 * the organization's rate limit and sets the RateLimit-* headers: an unknown or person-only
 * tool is refused before. http.ts counts every request without such a call itself.
 */
export const authorizesTool = (parts: ServerParts, name: string): boolean => !personOnlyToolNames.has(name) && parts.byName.has(name);

/** The same for a message on its way to the SDK's Server, which refuses a tools/call its schema refuses before callTool runs. */
export function authorizesMessage(parts: ServerParts, message: JSONRPCMessage): boolean {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return false;
  const parsed = CallToolRequestSchema.safeParse(message);
  return parsed.success && authorizesTool(parts, parsed.data.params.name);
}

/** `instructions`: the caller's (instructionsFor), for an initialize; else every tool's. */
export function createServer(deps: McpDeps, parts: ServerParts, call: McpCall, instructions = parts.instructions): Server {
  const server = new Server(
    { name: 'italian-company-data', title: 'Italian Company Data', version: deps.version },
    { capabilities: { tools: { listChanged: false } }, instructions, jsonSchemaValidator: parts.jsonSchemaValidator },
  );
  const handlers = createToolHandlers(deps, parts, call);
  server.setRequestHandler(methodOnly('tools/list'), (request) => {
    paramsOf(ListToolsRequestSchema, request, call, deps.logger);
    return handlers.listTools();
  });
  // The SDK's Server has already checked a tools/call against CallToolRequestSchema (see below).
  // Cancelled: as the transport says (a cancellation of the batch, which it keeps from the
  // Server), or by the Server's own abort, which leaves the request unanswered (the transport's
  // deadline then answers it). So an aborted call does not commit to its usage event either:
  // the transport would wait for an answer the Server never sends.
  server.setRequestHandler(methodOnly('tools/call'), (request, extra) => handlers.callTool(request as CallToolRequest, {
    cancelled: () => call.cancelled(extra.requestId) || extra.signal.aborted,
    commitToCharge: () => !extra.signal.aborted && call.commitToCharge(extra.requestId),
  }));
  return server;
}

// The SDK parses a request with the schema its handler is registered under, and answers a
// mismatch (tools/call without params, `arguments` that is not an object) as an internal error
// (-32603, its text a zod dump, which withErrorData hides): the caller's mistake reported as
// ours. So the handlers are registered under schemas that only name the method. tools/list
// parses its request here: a mismatch is -32602 with data.code invalid_params and one detail per
// field. A tools/call is checked by the SDK's Server itself before our handler runs (-32602), and
// withErrorData turns that refusal into the same details, so it is not parsed a second time.
const methodOnly = <M extends string>(method: M) => z.looseObject({ method: z.literal(method) });

function paramsOf<S extends z.ZodType>(schema: S, request: { method: string }, call: McpCall, logger: Logger): z.output<S> {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  throw protocolError(new AppError('invalid_params', `Invalid params for ${request.method}.`, { details: issueDetails(parsed.error.issues, 'params') }), call.nextRequestId(), logger);
}
