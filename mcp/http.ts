import type { IncomingMessage } from 'node:http';
import Koa, { type ParameterizedContext } from 'koa';
import {
  ErrorCode as RpcCode, InitializeRequestSchema, isInitializeRequest, JSONRPCMessageSchema, SUPPORTED_PROTOCOL_VERSIONS, type JSONRPCMessage, type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Principal } from '../core/access/index.js';
import { personalKey, requestAuthorization } from '../core/auth/index.js';
import { AppError, isAppError, issueDetails, type ErrorCode, type ErrorDetail } from '../core/errors/index.js';
import { newRequestId, requestIdOf } from '../core/ids/index.js';
import { accessLog, callerGone, checkHealth, closeAfterAnswer, livenessAnswer } from '../core/http-server/index.js';
import { rateLimitHeaders } from '../core/ratelimit/index.js';
import { jsonWithCachedParts } from './cached-json.js';
import {
  authorizesMessage, authorizesTool, createServer, createToolHandlers, instructionsFor, prepareServerParts, type McpCall, type McpDeps,
} from './create-server.js';
import { answerToolCall, plainToolCall } from './direct-tool-call.js';
import { errorCodeOfAnswers, httpErrorResponse, httpJsonRpcErrorResponse, jsonRpcErrorBody, retryAfterOfResults } from './errors.js';
import { nestsDeeperThan } from './json-nesting.js';
import { JsonResponseTransport } from './json-transport.js';
import { malformedMessageDetails } from './malformed-messages.js';
import { originCheck, type OriginCheck } from './origin-check.js';

// The tool server's HTTP edge: Streamable HTTP at /mcp (and /mcp/), stateless. A request from a
// browser page of an origin not allowed is refused first; every other request is authenticated
// before anything else; then the checks the SDK transport would make itself
// (Accept, Content-Type, body, JSON-RPC shape, protocol version) are made here, so that their
// errors too carry our data.code and data.requestId; then a lone tools/call goes straight to the
// tool handlers (direct-tool-call.ts), and anything else to a fresh SDK server through
// JsonResponseTransport; the answers go out through Koa's response, as JSON or, when the client
// prefers it, as an event stream.

export interface McpAppOptions extends McpDeps {
  /** One cheap round trip to the database, for /healthz: the process's OpenDatabase.probe. */
  checkDatabase(): Promise<void>;
  /** Largest accepted request body; tool arguments are small. */
  maxBodyBytes?: number;
  /** Which Origin headers are served (MCP_ALLOWED_ORIGINS); default: loopback origins only. */
  isAllowedOrigin?: OriginCheck;
  /** TRUST_GATEWAY_REQUEST_ID: take the request's id from the gateway's X-Request-Id. */
  trustGatewayRequestId?: boolean;
  /** How long a POST's messages may take before it is answered without them (default ANSWER_DEADLINE_MS; tests shorten it). */
  answerDeadlineMs?: number;
}

// What MCP traffic needs, with room to spare. The largest arguments the tools' input schemas
// accept are a metrics call's (80 slugs, every category, 10 years): about 3.7 KB, so a batch of
// MAX_BATCH such calls is about 75 KB (100 KB pretty-printed); an initialize is smaller, unless
// its clientInfo carries icons as data: URIs, which the rest leaves room for. Every byte read is
// parsed on the event loop the API shares under `npm start`: at this size and MAX_NESTING, the
// slowest body to parse (nothing but small arrays) takes a few milliseconds, where a megabyte
// took 40 ms flat and a quarter of a second or more nested (docs/mcp.md, Transport details).
const DEFAULT_MAX_BODY_BYTES = 256 * 1024;
// The deepest tool call is five levels (a batch, the message, params, arguments, an array of
// slugs), an initialize's capabilities a few more: 64 leaves clients' _meta plenty of room and
// is far below the depths at which JSON.parse's cost runs away from the body's size
// (json-nesting.ts).
const MAX_NESTING = 64;
const MAX_BATCH = 20;

// What /mcp serves: the 405's Allow, and what CORS preflights allow.
const ALLOWED_METHODS = 'POST, OPTIONS';

// CORS: browser-based clients (MCP Inspector in direct mode) send the key as a bearer header,
// not a cookie, so any origin the Origin check lets through may read the answers: `*`, not the
// origin echoed. A request from any other origin gets none of these headers. The
// SDK client's GET probe needs no listing to read its 405: GET is CORS-safelisted, so a
// preflight checks only its headers (test/mcp-browser.test.ts).
const CORS_HEADERS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': ALLOWED_METHODS,
  'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Last-Event-ID',
  'Access-Control-Expose-Headers': 'X-Request-Id, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, Mcp-Session-Id',
};

/**
 * JSON unless the client prefers an event stream: every client must accept both, so "asks for
 * SSE" means text/event-stream ranks above application/json (higher q, or listed first at equal q).
 */
export function prefersEventStream(accept: string): boolean {
  const ranges = accept.split(',').map((part, index) => {
    const [type = '', ...params] = part.trim().toLowerCase().split(';').map((s) => s.trim());
    const q = params.find((p) => p.startsWith('q='));
    return { type, q: q ? Number(q.slice(2)) : 1, index };
  });
  const sse = ranges.find((r) => r.type === 'text/event-stream');
  const json = ranges.find((r) => r.type === 'application/json');
  if (!sse) return false;
  if (!json) return true;
  return sse.q > json.q || (sse.q === json.q && sse.index < json.index);
}

const isJsonContentType = (value: string | undefined) => value !== undefined && /^application\/json\s*(?:;|$)/i.test(value.trim());
// JSON is UTF-8 (RFC 8259 §8.1); a body declared otherwise was read as UTF-8 all the same, and a
// Latin-1 "Forlì" searched for "Forl" and U+FFFD, and was billed. Koa reads the charset ('' for none).
const isUtf8OrNone = (charset: string) => charset === '' || /^utf-?8$/i.test(charset);
// Bytes that are no UTF-8 are refused, not read as U+FFFD: a query changed so is no query sent.
const utf8 = new TextDecoder('utf-8', { fatal: true });

class BodyTooLarge extends Error {}

/** The request ids a batch uses more than once, with one detail per request that repeats an earlier one. */
function repeatedIds(messages: JSONRPCMessage[]): { ids: RequestId[]; details: ErrorDetail[] } {
  const firstIndex = new Map<RequestId, number>();
  const ids = new Set<RequestId>();
  const details: ErrorDetail[] = [];
  messages.forEach((message, index) => {
    // Only requests: notifications have no id, and nothing is answered to a client's responses.
    if (!('method' in message) || !('id' in message)) return;
    const first = firstIndex.get(message.id);
    if (first === undefined) {
      firstIndex.set(message.id, index);
      return;
    }
    ids.add(message.id);
    details.push({ path: `${index}.id`, message: `repeats the id ${JSON.stringify(message.id)} of request ${first}` });
  });
  return { ids: [...ids], details };
}

/**
 * The request without its MCP 2025-11-25 task augmentation (`params.task`). This server declares
 * no tasks capability, and the spec (Tasks, "Task Support and Handling") says a receiver without
 * it MUST process such a request normally, ignoring the augmentation; the SDK's Server would
 * instead refuse it with an internal error (its capability check throws).
 */
function withoutTaskAugmentation(message: JSONRPCMessage): JSONRPCMessage {
  if (!('method' in message) || !('id' in message) || !message.params || !('task' in message.params)) return message;
  const { task: _ignored, ...params } = message.params;
  return { ...message, params };
}

/** What the request log reads of a request: who called, what was asked, and how it failed. */
interface McpRequestState {
  principal?: Principal;
  rpc?: string[];
  /** Every requestId the request's answers carry, in the order handed out, when more than the
   * header's: a batch's later answers get ids of their own (McpCall.nextRequestId). */
  requestIds?: string[];
  /** The code of our catalogue the request was refused with, or its first failed answer's (see errorCodeOfAnswers). */
  errorCode?: ErrorCode;
}

/** A message as the request log names it: "tools/call service_search_companies", "tools/list". */
function describeMessage(message: JSONRPCMessage): string {
  if (!('method' in message)) return 'response';
  const tool = message.method === 'tools/call' ? (message.params as { name?: unknown } | undefined)?.name : undefined;
  // The caller's own text: cut, as the unknown-tool message cuts it, so one request cannot write a
  // megabyte into the log.
  return (typeof tool === 'string' ? `tools/call ${tool}` : message.method).slice(0, 120);
}

async function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buf = chunk as Buffer;
    size += buf.length;
    if (size > limit) throw new BodyTooLarge();
    chunks.push(buf);
  }
  return Buffer.concat(chunks);
}

export function createMcpApp(options: McpAppOptions): Koa<McpRequestState> {
  const { logger } = options;
  const parts = prepareServerParts();
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const isAllowedOrigin = options.isAllowedOrigin ?? originCheck();
  const app = new Koa<McpRequestState>();
  // Errors are answered and logged by our handler; Koa's own handler would print to stderr.
  app.silent = true;

  // One line per request, as the API writes: support finds a call by the requestId its caller
  // was given, whatever the answer (a not_found tool result is a 200).
  app.use(accessLog<ParameterizedContext<McpRequestState>>(logger, (ctx) => ({
    requestId: ctx.response.get('X-Request-Id') || undefined,
    organizationId: ctx.state.principal?.organizationId,
    keyId: ctx.state.principal?.keyId,
    rpc: ctx.state.rpc,
    // So that support finds a batch's later tool call by the requestId in its result too.
    requestIds: ctx.state.requestIds && ctx.state.requestIds.length > 1 ? ctx.state.requestIds : undefined,
    errorCode: ctx.state.errorCode,
  })));

  app.use(async (ctx) => {
    // The gateway's id with TRUST_GATEWAY_REQUEST_ID (core/ids requestIdOf), so its access log
    // and ours name the call alike; the gateway never retries a tool call (deploy/nginx.conf).
    const requestId = requestIdOf(ctx.req.headers['x-request-id'], options.trustGatewayRequestId ?? false);
    ctx.set('X-Request-Id', requestId);
    // As the API's answers: an error message echoes what the caller sent; no browser sniffing.
    ctx.set('X-Content-Type-Options', 'nosniff');
    const origin = ctx.req.headers.origin;
    const originRefused = origin !== undefined && !isAllowedOrigin(origin);
    if (!originRefused) ctx.set(CORS_HEADERS);

    const rpcError = (status: number, rpcCode: number, code: ErrorCode, message: string, id: string | number | null = null, details?: ErrorDetail[]) => {
      ctx.status = status;
      ctx.body = jsonRpcErrorBody(rpcCode, code, message, requestId, id, details);
      ctx.state.errorCode = code;
    };
    // An answer with rate_limited or limit_reached tool results says how long to wait in the
    // header too.
    const setRetryAfter = (responses: JSONRPCMessage[]) => {
      const seconds = retryAfterOfResults(responses);
      if (seconds !== undefined) ctx.set('Retry-After', String(seconds));
    };
    const envelope = (err: unknown) => {
      const response = httpErrorResponse(err, requestId, logger);
      ctx.status = response.status;
      ctx.set(response.headers);
      ctx.body = response.body;
      ctx.state.errorCode = response.body.error.code;
    };

    try {
      // Readiness (/healthz) for load balancers and compose health checks, liveness (/livez) for
      // an orchestrator's restarts: no key, no rate limit, no billing.
      if (ctx.path === '/healthz' && ctx.method === 'GET') {
        const answer = await checkHealth({ database: options.checkDatabase, usageBus: options.usage.reachable?.bind(options.usage), figures: () => ({ rateLimitStore: options.access.rateLimitStore() }) });
        ctx.status = answer.status;
        ctx.body = answer.body;
        return;
      }
      if (ctx.path === '/livez' && ctx.method === 'GET') {
        const answer = livenessAnswer();
        ctx.status = answer.status;
        ctx.body = answer.body;
        return;
      }
      // /mcp/ is /mcp itself, not a redirect to it: many clients drop a POST's body on a redirect.
      if (ctx.path !== '/mcp' && ctx.path !== '/mcp/') return envelope(new AppError('unknown_endpoint', isOAuthPath(ctx.path) ? NO_OAUTH : 'No endpoint matches this path: the tool server is at /mcp.'));
      // Before the key, the rate and the body: nothing is counted, billed or read for such a page,
      // whatever the method (a preflight too, which gets no CORS headers, so its request is never
      // sent). A transport-level refusal like the 406 and 415, as the SDK's own transport answers
      // it (403, -32000, id null: the body is not read). The catalogue has no code for a refused
      // origin; its 403s are about the organization's plan, which this is not, so data.code is
      // invalid_params, the code of the other refusals of a request's headers.
      if (originRefused) {
        return rpcError(403, -32000, 'invalid_params', `Forbidden: requests from the origin ${origin.slice(0, 120)} are not accepted. A browser client's origin must be listed in the tool server's MCP_ALLOWED_ORIGINS.`);
      }
      if (ctx.method === 'OPTIONS') {
        ctx.status = 204;
        return;
      }

      // The key is checked on every request, whatever it carries.
      let principal;
      try {
        principal = await options.access.authenticate(requestAuthorization(ctx.req));
        if (principal.keyKind !== 'organization') throw personalKey();
      } catch (err) {
        return envelope(err);
      }
      ctx.state.principal = principal;

      // Every authenticated request counts once against the organization's rate limits (shared
      // with the API) and its answer carries the RateLimit-* headers. A tools/call counts where
      // the tool admits it (access.authorize, which also checks plan and allowance, and sets the
      // headers); any other request (initialize, tools/list, a notification, the GET a client
      // probes with, a request refused here) is counted by admit, before it is answered. Over
      // the limit, admit's refusal is the answer: 429 with Retry-After, in the error envelope,
      // as a refused key's. Any other refusal (the plan unreadable: entitlement_unavailable) is
      // a protocol failure, a JSON-RPC error object (decisions.md), the one a tools/list in a
      // batch gets for it, naming `id`, the request refused, with its HTTP status (503) and
      // Retry-After.
      const admit = async (id: RequestId | null): Promise<boolean> => {
        try {
          ctx.set(rateLimitHeaders(await options.access.admit(principal)));
          return true;
        } catch (err) {
          if (isAppError(err) && err.code === 'rate_limited') {
            envelope(err);
          } else {
            const response = httpJsonRpcErrorResponse(err, requestId, logger, id);
            ctx.status = response.status;
            ctx.set(response.headers);
            ctx.body = response.body;
            ctx.state.errorCode = response.body.error.data.code;
          }
          return false;
        }
      };
      const refuse = async (...args: Parameters<typeof rpcError>): Promise<void> => {
        if (await admit(args[4] ?? null)) rpcError(...args);
      };

      if (ctx.method !== 'POST') {
        if (!(await admit(null))) return;
        ctx.set('Allow', ALLOWED_METHODS);
        return rpcError(405, -32000, 'unknown_endpoint', 'Method not allowed: this server is stateless and opens no event stream; send JSON-RPC messages with POST.');
      }
      const accept = ctx.get('Accept');
      if (!accept.includes('application/json') || !accept.includes('text/event-stream')) {
        return refuse(406, -32000, 'invalid_params', 'Not acceptable: the Accept header must list both application/json and text/event-stream.');
      }
      if (!isJsonContentType(ctx.get('Content-Type'))) {
        return refuse(415, -32000, 'invalid_params', 'Unsupported media type: send Content-Type: application/json.');
      }
      const { charset } = ctx.request;
      if (!isUtf8OrNone(charset)) {
        return refuse(415, -32000, 'invalid_params', `Unsupported charset ${JSON.stringify(charset)}: JSON is sent as UTF-8 (Content-Type: application/json, or with charset=utf-8).`);
      }
      // A compressed body was read as JSON it is not ("Parse error"), and one in a coding nobody
      // knows was read as if not compressed.
      const encoding = ctx.get('Content-Encoding').trim();
      if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
        return refuse(415, -32000, 'invalid_params', `Unsupported Content-Encoding ${JSON.stringify(encoding)}: send the body uncompressed.`);
      }
      const notJson = () => refuse(400, RpcCode.ParseError, 'invalid_params', 'Parse error: the body is not valid JSON.');
      let body: Buffer;
      try {
        body = await readBody(ctx.req, maxBodyBytes);
      } catch (err) {
        // A body cut short (the client gone) is answered as JSON it is not, as it always was.
        if (!(err instanceof BodyTooLarge)) return notJson();
        closeAfterAnswer(ctx.res);
        return refuse(413, -32000, 'invalid_params', `Request body larger than ${maxBodyBytes} bytes.`);
      }
      // Before JSON.parse, which would block every other request of the process for as long as
      // a deep body takes it (json-nesting.ts). Valid JSON or not, such a body is no request
      // this server takes, so -32600, and id null: the body is not parsed for one.
      if (nestsDeeperThan(body, MAX_NESTING)) {
        return refuse(400, RpcCode.InvalidRequest, 'invalid_params', `Invalid request: the body nests arrays and objects more than ${MAX_NESTING} levels deep; a JSON-RPC message needs far fewer.`);
      }
      let text: string;
      try {
        text = utf8.decode(body);
      } catch {
        return refuse(400, RpcCode.ParseError, 'invalid_params', 'Parse error: the body is not valid UTF-8, as JSON must be: send text as UTF-8.');
      }
      let raw: unknown;
      try {
        raw = JSON.parse(text);
      } catch {
        return notJson();
      }
      const list = Array.isArray(raw) ? raw : [raw];
      const parsed = list.map((m) => JSONRPCMessageSchema.safeParse(m));
      // A refusal of one message answers its id; a refusal of a whole batch answers null, as
      // JSON-RPC asks when no single request can be named.
      const firstId = Array.isArray(raw) ? undefined : (raw as { id?: unknown } | null)?.id;
      const echoId = typeof firstId === 'string' || typeof firstId === 'number' ? firstId : null;
      if (list.length === 0) return refuse(400, RpcCode.InvalidRequest, 'invalid_params', 'Invalid request: an empty batch; a batch holds at least one message.', null);
      if (list.length > MAX_BATCH) {
        return refuse(400, RpcCode.InvalidRequest, 'invalid_params', `Invalid request: a batch of ${list.length} messages; a batch holds at most ${MAX_BATCH}.`, null);
      }
      if (parsed.some((p) => !p.success)) {
        const details = malformedMessageDetails(list, parsed.map((p) => p.success), Array.isArray(raw));
        const which = Array.isArray(raw) ? ` (${details.length === 1 ? 'message' : 'messages'} ${details.map((d) => d.path.split('.')[0]).join(', ')} of the batch)` : '';
        return refuse(400, RpcCode.InvalidRequest, 'invalid_params', `Invalid request: not a JSON-RPC 2.0 message${which}; details say what is wrong.`, echoId, details);
      }
      const messages = parsed.map((p) => withoutTaskAugmentation(p.data as JSONRPCMessage));
      ctx.state.rpc = messages.map(describeMessage);
      // Answers are matched to requests by id: a batch that repeats one would run (and bill)
      // every request but answer only one of them, so it is refused whole before anything runs.
      // The id of the answer is null, as JSON-RPC asks when no single request can be named.
      const repeated = repeatedIds(messages);
      if (repeated.ids.length > 0) {
        const ids = repeated.ids.map((id) => JSON.stringify(id)).join(', ');
        return refuse(400, RpcCode.InvalidRequest, 'invalid_params', `Invalid request: each request of a batch needs an id of its own; repeated: ${ids}.`, null, repeated.details);
      }
      // The method check first: isInitializeRequest parses the whole message with zod.
      const initializing = messages.some((m) => 'method' in m && m.method === 'initialize' && isInitializeRequest(m));
      if (initializing && messages.length > 1) {
        return refuse(400, RpcCode.InvalidRequest, 'invalid_params', 'Invalid request: initialize must be sent alone.', echoId);
      }
      // An initialize the SDK's schema refuses would reach its handler and come back as an
      // internal error: it is the caller's mistake, so it is refused here, field by field.
      const [only] = messages;
      if (!initializing && messages.length === 1 && only && 'method' in only && only.method === 'initialize' && 'id' in only) {
        const details = issueDetails(InitializeRequestSchema.safeParse(only).error?.issues ?? [], 'params');
        return refuse(200, RpcCode.InvalidParams, 'invalid_params', 'Invalid params for initialize.', only.id, details);
      }
      const protocolVersion = ctx.get('Mcp-Protocol-Version');
      if (!initializing && protocolVersion !== '' && !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) {
        return refuse(400, -32000, 'invalid_params', `Unsupported MCP-Protocol-Version ${protocolVersion}; supported: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}.`, echoId);
      }

      let handedOut = false;
      // Only a batch can cancel its own requests (JsonResponseTransport); a plain tools/call cannot.
      let transport: JsonResponseTransport | undefined;
      const call: McpCall = {
        principal,
        nextRequestId: () => {
          const id = handedOut ? newRequestId() : ((handedOut = true), requestId);
          (ctx.state.requestIds ??= []).push(id);
          return id;
        },
        setHeaders: (headers) => {
          if (!ctx.res.headersSent) for (const [k, v] of Object.entries(headers)) ctx.res.setHeader(k, v);
        },
        callerGone: () => callerGone(ctx.req),
        cancelled: (id) => transport?.isCancelled(id) ?? false,
        commitToCharge: (id) => transport?.commitToCharge(id) ?? true,
      };
      // A batch, even of one, is answered as an array (or one event per answer) by the Server path below.
      const toolCall = !Array.isArray(raw) ? plainToolCall(messages) : undefined;
      const authorized = toolCall ? authorizesTool(parts, toolCall.request.params.name) : messages.some((m) => authorizesMessage(parts, m));
      // A refusal names a lone request; nothing else (a batch, a notification, a client's response) has one id to name.
      const loneRequestId = only && 'method' in only ? echoId : null;
      if (!authorized && !(await admit(loneRequestId))) return;
      let responses: JSONRPCMessage[];
      if (toolCall) {
        responses = [await answerToolCall(createToolHandlers(options, parts, call), toolCall, requestId, logger)];
      } else {
        const server = createServer(options, parts, call, initializing ? await instructionsFor(options, parts, principal) : undefined);
        transport = new JsonResponseTransport(call.nextRequestId, logger, options.answerDeadlineMs);
        await server.connect(transport);
        // No server.close() afterwards: every request has been answered once handle() resolves,
        // the server and transport hold no timers or sockets and are simply dropped. Closing
        // made the SDK abort its (already finished) handlers' signals and build a "connection
        // closed" error per call, about 4% of a tool call's CPU, for nothing.
        responses = await transport.handle(messages, { requestInfo: { headers: ctx.req.headers } });
      }
      if (responses.length === 0) {
        // Only notifications or client responses, or requests the batch itself cancelled: the
        // Streamable HTTP transport says 202 with no body (and JSON-RPC sends no empty array). Without one Koa writes the status text ("Accepted", text/plain); an explicit null
        // body is sent empty, and the status comes after it, as Koa turns a null body into a 204.
        ctx.body = null;
        ctx.status = 202;
        return;
      }
      // The answers exist before any byte is sent, so either form carries the headers their
      // calls set: RateLimit-* (decisions.md: on every authenticated response) and Retry-After.
      setRetryAfter(responses);
      // A tool call that failed is still a 200: its line says how, as the API's lines do.
      ctx.state.errorCode = errorCodeOfAnswers(responses);
      // As JSON.stringify would write it, with the cache's text of cached data spliced in
      // (depth 4: response, result, structuredContent, then e.g. the profile).
      const texts = responses.map((r) => jsonWithCachedParts(r, options.cachedText, 4));
      if (prefersEventStream(accept)) {
        // An event stream of the answers, as the SDK's transport writes them (one `message`
        // event each, no event ids: nothing is resumable on a stateless server). Written whole,
        // not through that transport: it sends the stream's headers before the calls are admitted,
        // and this server has nothing to stream before its answers (no progress or log messages).
        ctx.type = 'text/event-stream';
        ctx.set('Cache-Control', 'no-cache, no-transform');
        ctx.body = texts.map((text) => `event: message\ndata: ${text}\n\n`).join('');
        return;
      }
      ctx.type = 'application/json';
      ctx.body = Array.isArray(raw) ? `[${texts.join(',')}]` : texts[0];
    } catch (err) {
      logger.error('tool server request failed', { requestId, err });
      ctx.state.errorCode = 'internal_error';
      if (ctx.res.headersSent) {
        ctx.res.destroy();
        return;
      }
      rpcError(500, RpcCode.InternalError, 'internal_error', 'An internal error occurred. It has been logged; retry later or contact support with the request id.');
    }
  });
  return app;
}

// Where a client looks for OAuth after a 401 from /mcp (the MCP authorization spec's discovery
// documents, and the default /register, /authorize and /token of its 2025-03-26 revision).
// mcp-remote, the bridge docs/mcp.md gives for Claude Desktop, does so when the key it sends is
// refused, and then prints this answer's body, not the 401's: without a word of the key there,
// a wrong key read as a wrong URL.
const OAUTH_PATH = /^\/(?:\.well-known\/(?:oauth-protected-resource|oauth-authorization-server|openid-configuration)(?:\/.*)?|register|authorize|token)\/?$/;
const isOAuthPath = (path: string) => OAUTH_PATH.test(path);
const NO_OAUTH = 'This tool server has no OAuth: it takes an API key, sent on /mcp as "Authorization: Bearer sk_live_…". '
  + 'A client that came here after a 401 from /mcp sent no key or one that was refused (missing_api_key, invalid_api_key): check the key in its configuration.';
