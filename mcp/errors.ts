import { ErrorCode as RpcCode, type CallToolResult, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import { errorCatalogue, errorMessage, issueDetails, toErrorObject, type AppError, type ErrorCode, type ErrorObject } from '../core/errors/index.js';
import type { Logger } from '../core/logging/index.js';

// The one MCP edge mapper: every failure on the tool server leaves through here, as
//  - a tool result with isError (tool calls: the model reads it and can correct itself),
//  - a JSON-RPC error object (protocol failures, including a request refused whole because the
//    organization's plan cannot be read: sent with that code's HTTP status), or
//  - the API's { error } envelope (refusals of the key or of the rate: 401, 503 auth_unavailable,
//    429 rate_limited; and paths other than /mcp).
// Messages come from AppError (written for the caller) or the catalogue; anything else that
// was thrown is logged here and leaves as internal_error, so no stack, SQL or driver text leaks.

/** A JSON-RPC error the SDK's Protocol sends as is: it copies code, message and data. */
export class JsonRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: { code: ErrorCode; requestId: string; details?: ErrorObject['details']; retryAfterSeconds?: number },
  ) {
    super(message);
    this.name = 'JsonRpcError';
  }
}

// As the API's error mapper: a dependency's failure is said once per code every 10 s, with how
// many were held back (the request log has each call); a bug every time.
function mapped(err: unknown, requestId: string, logger: Logger): { error: ErrorObject; appError: AppError } {
  const result = toErrorObject(err, requestId);
  if (result.appError.code === 'internal_error' && result.appError !== err) logger.error('tool server failure', { requestId, err });
  else if (result.appError.status >= 500) {
    const cause = result.appError.cause;
    logger.warnRepeating(result.appError.code, 'tool server dependency failure', { requestId, code: result.appError.code, ...(cause !== undefined ? { cause: errorMessage(cause) } : {}) });
  }
  return result;
}

/** A failed tool call: isError, a readable text, and structuredContent.error shaped like the API's error. */
export function toolErrorResult(err: unknown, requestId: string, logger: Logger): CallToolResult {
  const { error, appError } = mapped(err, requestId, logger);
  const lines = [`Error ${error.code}: ${error.message}`];
  for (const d of error.details ?? []) lines.push(`- ${d.path}: ${d.message}`);
  if (appError.retryAfterSeconds !== undefined) lines.push(`Retry after ${appError.retryAfterSeconds} second${appError.retryAfterSeconds === 1 ? '' : 's'}.`);
  lines.push(`(requestId ${requestId})`);
  // Keys in the order the SDK's Server writes a result (see create-server.ts).
  return {
    _meta: { requestId, ...(appError.retryAfterSeconds !== undefined && { retryAfterSeconds: appError.retryAfterSeconds }) },
    content: [{ type: 'text', text: lines.join('\n') }],
    structuredContent: { error },
    isError: true,
  };
}

// Tool results that tell the caller to wait before calling again (decisions.md: Retry-After).
const waitCodes: ReadonlySet<string> = new Set<ErrorCode>(['rate_limited', 'limit_reached']);

/**
 * The Retry-After of an answer (JSON or event stream) that carries rate_limited or
 * limit_reached tool results: the longest of their waits (a batch can hold several), in whole
 * seconds, at least 1. Undefined when it carries none. The result stays as it is (HTTP 200,
 * isError): the header only lets HTTP-level clients and proxies see the wait too.
 */
export function retryAfterOfResults(responses: readonly JSONRPCMessage[]): number | undefined {
  let longest: number | undefined;
  for (const response of responses) {
    if (!('result' in response)) continue;
    const result = response.result as Partial<CallToolResult>;
    if (result.isError !== true) continue;
    const code = (result.structuredContent as { error?: { code?: unknown } } | undefined)?.error?.code;
    const wait = result._meta?.retryAfterSeconds;
    if (typeof code !== 'string' || !waitCodes.has(code) || typeof wait !== 'number' || !Number.isFinite(wait)) continue;
    const seconds = Math.max(1, Math.ceil(wait));
    longest = longest === undefined ? seconds : Math.max(longest, seconds);
  }
  return longest;
}

/**
 * For the request log: the code of the first answer that failed, a tool result with isError
 * (structuredContent.error.code) or a JSON-RPC error (data.code), in the order of the request's
 * messages; undefined when none did. A batch's other failures are not named: its line lists
 * what was asked (rpc), and each answer carries its own requestId.
 */
export function errorCodeOfAnswers(responses: readonly JSONRPCMessage[]): ErrorCode | undefined {
  for (const response of responses) {
    const code = 'error' in response
      ? (response.error.data as { code?: unknown } | undefined)?.code
      : 'result' in response && (response.result as Partial<CallToolResult>).isError === true
        ? ((response.result as Partial<CallToolResult>).structuredContent as { error?: { code?: unknown } } | undefined)?.error?.code
        : undefined;
    if (typeof code === 'string' && code in errorCatalogue) return code as ErrorCode;
  }
  return undefined;
}

const rpcCodeOf = (code: ErrorCode): number =>
  code === 'invalid_params' || code === 'unknown_endpoint' ? RpcCode.InvalidParams : code === 'internal_error' ? RpcCode.InternalError : -32000;

const rpcDataOf = (error: ErrorObject, appError: AppError, requestId: string): JsonRpcError['data'] => ({
  code: error.code,
  requestId,
  ...(error.details && { details: error.details }),
  ...(appError.retryAfterSeconds !== undefined && { retryAfterSeconds: appError.retryAfterSeconds }),
});

/** A protocol-level failure (tools/list could not read the plan, an unknown tool): JSON-RPC error with data.code. */
export function protocolError(err: unknown, requestId: string, logger: Logger): JsonRpcError {
  const { error, appError } = mapped(err, requestId, logger);
  return new JsonRpcError(rpcCodeOf(error.code), error.message, rpcDataOf(error, appError, requestId));
}

const codeOfRpc = (rpc: number): ErrorCode =>
  rpc === RpcCode.ParseError || rpc === RpcCode.InvalidRequest || rpc === RpcCode.InvalidParams ? 'invalid_params'
    : rpc === RpcCode.MethodNotFound ? 'unknown_endpoint'
      : 'internal_error';

/**
 * Errors the SDK itself answers (method not found, malformed params) carry no data; give them
 * ours on the way out, and never let an internal error's own text through: it goes to the log
 * under the requestId instead, as the catalogue's message tells the caller.
 */
export function withErrorData(message: JSONRPCMessage, requestIdOf: string | (() => string), logger: Logger): JSONRPCMessage {
  if (!('error' in message)) return message;
  const data = message.error.data as { code?: unknown } | undefined;
  if (data !== null && typeof data === 'object' && typeof data.code === 'string') return message;
  // Taken only now: in a batch each answer gets an id of its own (McpCall.nextRequestId), and
  // one that already carries ours must not use one up.
  const requestId = typeof requestIdOf === 'string' ? requestIdOf : requestIdOf();
  const code = codeOfRpc(message.error.code);
  const refused = code === 'invalid_params' ? sdkParamsRefusal(message.error.message) : undefined;
  if (refused) return { ...message, error: { code: message.error.code, message: refused.message, data: { code, requestId, details: refused.details } } };
  if (code === 'internal_error') {
    logger.error('tool server failure', { requestId, rpcError: { code: message.error.code, message: message.error.message, data: message.error.data } });
  }
  const text = code === 'internal_error' ? errorCatalogue.internal_error.message : message.error.message;
  return { ...message, error: { code: message.error.code, message: text, data: { code, requestId } } };
}

// The SDK's Server checks a tools/call's params itself and refuses a mismatch with zod's issues
// as JSON in the message ("MCP error -32602: Invalid tools/call request: [{...}]"). Read back,
// they become our message and one detail per field, as every other invalid_params has. A
// message of any other form is passed on unchanged.
const SDK_PARAMS_REFUSAL = /^(?:MCP error -32602: )?Invalid (\S+) request: (\[[\s\S]*\])$/;

function sdkParamsRefusal(text: string): { message: string; details: NonNullable<ErrorObject['details']> } | undefined {
  const match = SDK_PARAMS_REFUSAL.exec(text);
  if (!match) return undefined;
  let issues: unknown;
  try {
    issues = JSON.parse(match[2]!);
  } catch {
    return undefined;
  }
  if (!Array.isArray(issues) || !issues.every(isIssue)) return undefined;
  return { message: `Invalid params for ${match[1]}.`, details: issueDetails(issues, 'params') };
}

const isIssue = (value: unknown): value is { path: PropertyKey[]; message: string } =>
  typeof value === 'object' && value !== null && Array.isArray((value as { path?: unknown }).path) && typeof (value as { message?: unknown }).message === 'string';

/** The body of an HTTP-level JSON-RPC error (bad Accept, bad JSON, wrong method). */
export function jsonRpcErrorBody(rpcCode: number, code: ErrorCode, message: string, requestId: string, id: string | number | null = null, details?: ErrorObject['details']) {
  return { jsonrpc: '2.0' as const, id, error: { code: rpcCode, message, data: { code, requestId, ...(details && { details }) } } };
}

/** A refusal's own headers (RateLimit-* once the key is known) and the wait it asks for. */
function refusalHeaders(appError: AppError): Record<string, string> {
  const headers: Record<string, string> = { ...appError.headers };
  if (appError.retryAfterSeconds !== undefined) headers['Retry-After'] = String(appError.retryAfterSeconds);
  return headers;
}

/** 401, 503 auth_unavailable, 429 rate_limited: the API's envelope, plus the bearer challenge on 401. */
export function httpErrorResponse(err: unknown, requestId: string, logger: Logger): { status: number; headers: Record<string, string>; body: { error: ErrorObject } } {
  const { error, appError } = mapped(err, requestId, logger);
  const headers = refusalHeaders(appError);
  if (appError.status === 401) {
    headers['WWW-Authenticate'] = appError.code === 'missing_api_key' ? 'Bearer realm="mcp"' : 'Bearer realm="mcp", error="invalid_token"';
  }
  return { status: appError.status, headers, body: { error } };
}

/**
 * A request refused whole after its key was accepted, for any reason but the rate (the
 * organization's plan cannot be read when the request is counted: entitlement_unavailable): the
 * JSON-RPC error object a tools/list answered in a batch gets for the same failure (protocolError),
 * with `id` the refused request's (null for a batch or a notification), sent with its code's HTTP
 * status and Retry-After.
 */
export function httpJsonRpcErrorResponse(err: unknown, requestId: string, logger: Logger, id: RequestId | null) {
  const { error, appError } = mapped(err, requestId, logger);
  return {
    status: appError.status,
    headers: refusalHeaders(appError),
    body: { jsonrpc: '2.0' as const, id, error: { code: rpcCodeOf(error.code), message: error.message, data: rpcDataOf(error, appError, requestId) } },
  };
}
