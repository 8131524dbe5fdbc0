import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCRequest, type JSONRPCMessage, type MessageExtraInfo, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../core/logging/index.js';
import { withErrorData } from './errors.js';

/**
 * Streamable HTTP for one stateless POST, in process: the SDK's Server still does the protocol
 * (initialize negotiation, request validation, dispatch), this only hands it the
 * already-validated messages and collects its responses for the HTTP body, which http.ts writes
 * as JSON or as an event stream.
 *
 * Why not the SDK's StreamableHTTPServerTransport: in JSON mode it converts every Node request
 * and response to web Request/Response objects (through @hono/node-server) and parses the body a
 * second time, which made a tool call cost several times the CPU of an API call; in SSE mode it
 * also sends the stream's headers before the calls are admitted, so they lacked RateLimit-*.
 */
export class JsonResponseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  // Keyed by id: http.ts refuses a batch that repeats an id before it gets here.
  private readonly responses = new Map<RequestId, JSONRPCMessage>();
  private pending = new Set<RequestId>();
  private done: (() => void) | undefined;

  constructor(
    /** The request id of an error the SDK answers itself: the batch's next (McpCall.nextRequestId). */
    private readonly nextRequestId: () => string,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {}

  /** Delivers the messages and resolves with the responses, in request order (none for notifications). */
  async handle(messages: JSONRPCMessage[], extra: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    const ids = messages.filter(isJSONRPCRequest).map((m) => m.id);
    this.pending = new Set(ids);
    const finished = new Promise<void>((resolve) => {
      this.done = resolve;
    });
    for (const message of messages) this.onmessage?.(message, extra);
    if (this.pending.size > 0) await finished;
    return ids.map((id) => this.responses.get(id)!).filter(Boolean);
  }

  async send(message: JSONRPCMessage, _options?: TransportSendOptions): Promise<void> {
    // Only responses matter on a stateless answer; server-to-client requests and
    // notifications (progress, logging) have nowhere to go and are dropped, as the SDK does.
    if (!('id' in message) || 'method' in message || message.id === undefined || !this.pending.has(message.id)) return;
    this.responses.set(message.id, withErrorData(message, this.nextRequestId, this.logger));
    this.pending.delete(message.id);
    if (this.pending.size === 0) this.done?.();
  }

  async close(): Promise<void> {
    this.done?.();
    this.onclose?.();
  }
}
