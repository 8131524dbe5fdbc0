import {
  CallToolRequestSchema, ErrorCode as RpcCode, type CallToolRequest, type JSONRPCMessage, type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../core/logging/index.js';
import type { ToolHandlers } from './create-server.js';
import { withErrorData } from './errors.js';

/**
 * A lone, plain tools/call (the message an agent sends for every tool use) is answered by the
 * tool handlers directly, without building an SDK Server for it. Per stateless request, the
 * Server's construction, its dispatch and its three zod passes over the request and the result
 * made up about a quarter of the heap a profile tool call allocated (25 Nov 2026, allocation
 * sampling under `npm run bench`'s load); answered directly, the call took 55.9 µs of CPU
 * instead of 115.8 (docs/mcp.md, "Throughput").
 *
 * The answer is the one the Server gives: the same handlers, the same response object (result
 * keys in the order the SDK's result schema writes them, see create-server.ts), and a thrown
 * error turned into a JSON-RPC error as the SDK's Protocol does. Everything else (initialize,
 * tools/list, batches, notifications, and any tools/call whose params the
 * SDK's schema refuses, refused there as on every other path, see withErrorData) still goes
 * through the Server. A task-augmented call comes here too: http.ts has already dropped its
 * `task`, which this server, declaring no tasks capability, ignores.
 */
export function plainToolCall(messages: JSONRPCMessage[]): { id: RequestId; request: CallToolRequest } | undefined {
  if (messages.length !== 1) return undefined;
  const [message] = messages;
  // The messages were validated as JSON-RPC by http.ts: a request is one with a method and an
  // id (the SDK's isJSONRPCRequest would parse the whole message with zod again).
  if (!message || !('method' in message) || !('id' in message) || message.method !== 'tools/call') return undefined;
  if (!isCallToolRequest(message)) return undefined;
  // The message itself, as the SDK's Server hands its handler the request it has checked, not
  // zod's copy: that copy rebuilds `arguments` by assignment, which drops an own `__proto__` key
  // of the caller's JSON (it sets the copy's prototype instead), so the tool's schema would not
  // see, and refuse, what a batch of one has refused by name.
  return { id: message.id, request: message };
}

const isCallToolRequest = (message: JSONRPCMessage): message is JSONRPCMessage & CallToolRequest => CallToolRequestSchema.safeParse(message).success;

export async function answerToolCall(handlers: ToolHandlers, call: { id: RequestId; request: CallToolRequest }, requestId: string, logger: Logger): Promise<JSONRPCMessage> {
  try {
    return { result: await handlers.callTool(call.request), jsonrpc: '2.0', id: call.id };
  } catch (err) {
    // What the SDK's Protocol sends for a handler's exception (our protocolError carries code,
    // message and data), with our data added as on every other path.
    const { code, message, data } = err as { code?: unknown; message?: unknown; data?: unknown };
    return withErrorData({
      jsonrpc: '2.0',
      id: call.id,
      error: {
        code: typeof code === 'number' && Number.isSafeInteger(code) ? code : RpcCode.InternalError,
        message: typeof message === 'string' ? message : 'Internal error',
        ...(data !== undefined && { data }),
      },
    }, requestId, logger);
  }
}
