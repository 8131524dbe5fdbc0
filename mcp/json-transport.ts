import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode as RpcCode, isJSONRPCRequest, type JSONRPCMessage, type MessageExtraInfo, type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '../core/logging/index.js';
import { withErrorData } from './errors.js';

/**
 * How long one POST's messages may take before it is answered without the ones still missing
 * (each then a JSON-RPC internal error, logged). A safety net, not a limit any call should
 * meet: a company query gives up after COMPANY_QUERY_TIMEOUT_MS (2 s) and the gateway after 30 s
 * (deploy/nginx.conf); it exists so that no handler, and no change in how the SDK's Protocol
 * answers, can leave a POST unanswered. The one exception: a tool call already publishing its
 * usage event at the deadline is waited for (JsonResponseTransport.commitToCharge), which the
 * publish's own deadline bounds (USAGE_PUBLISH_DEADLINE_MS, 10 s).
 */
export const ANSWER_DEADLINE_MS = 60_000;

/**
 * The ids of `requests` that a `notifications/cancelled` among `messages` names. All of one
 * POST arrives at once, so a cancellation applies wherever it stands in the batch.
 */
function cancelledInBatch(messages: JSONRPCMessage[], requests: ReadonlySet<RequestId>): Set<RequestId> {
  const ids = new Set<RequestId>();
  for (const message of messages) {
    const id = cancelledRequestId(message);
    if (id !== undefined && requests.has(id)) ids.add(id);
  }
  return ids;
}

function cancelledRequestId(message: JSONRPCMessage): RequestId | undefined {
  if (!('method' in message) || 'id' in message || message.method !== 'notifications/cancelled') return undefined;
  const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

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
 *
 * A `notifications/cancelled` naming a request of the same batch is kept here, not handed to
 * the Server: its Protocol would abort that request's handler and then send nothing for it, and
 * this POST, which must be answered once every request has been, would wait for ever. Instead
 * the request runs to its answer, which is left out of the batch's (the MCP specification: the
 * receiver of a cancellation should not send a response for the request), and the tool handlers
 * ask isCancelled before they run and commitToCharge before they charge (McpCall.cancelled,
 * McpCall.commitToCharge), which refuses a cancelled request. One naming anything else goes to the
 * Server, which ignores an id it is not running: a request of another POST has already been
 * answered (nothing is kept between POSTs).
 */
export class JsonResponseTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  // Keyed by id: http.ts refuses a batch that repeats an id before it gets here.
  private readonly responses = new Map<RequestId, JSONRPCMessage>();
  private pending = new Set<RequestId>();
  /** Named by a cancellation of the batch: answered by the Server, left out of the POST's answer. */
  private cancelled = new Set<RequestId>();
  /** Still unanswered at the deadline: the POST's answer carries an error in their place. */
  private readonly overdue = new Set<RequestId>();
  /** Tool calls committed to their usage event (commitToCharge): never overdue, the deadline waits for their answers. */
  private readonly charging = new Set<RequestId>();
  private done: (() => void) | undefined;

  constructor(
    /** The request id of an error the SDK answers itself: the batch's next (McpCall.nextRequestId). */
    private readonly nextRequestId: () => string,
    private readonly logger: Logger,
    private readonly deadlineMs = ANSWER_DEADLINE_MS,
  ) {}

  async start(): Promise<void> {}

  /** Whether the request of this id will not get its own result in the answer: cancelled in the batch, or overdue. */
  isCancelled(id: RequestId): boolean {
    return this.cancelled.has(id) || this.overdue.has(id);
  }

  /**
   * For a tool call about to publish its usage event, just before it does: false when the
   * request will not get its result in the answer (isCancelled), so the call must not be
   * charged; else true, and the request can no longer become overdue: once its event may be
   * published the call may be charged, and a charged call must get its own answer, never an
   * internal_error. The check and the commitment are one synchronous step, so the deadline
   * cannot fall between them; the caller must publish without awaiting anything first.
   */
  commitToCharge(id: RequestId): boolean {
    if (this.isCancelled(id)) return false;
    this.charging.add(id);
    return true;
  }

  /**
   * Delivers the messages and resolves with the responses, in request order (none for
   * notifications, nor for a request the batch cancels), within the deadline, or, when tool
   * calls were publishing their usage events at the deadline, once those have their answers.
   */
  async handle(messages: JSONRPCMessage[], extra: MessageExtraInfo): Promise<JSONRPCMessage[]> {
    const ids = messages.filter(isJSONRPCRequest).map((m) => m.id);
    this.pending = new Set(ids);
    this.cancelled = cancelledInBatch(messages, this.pending);
    const finished = new Promise<void>((resolve) => {
      this.done = resolve;
    });
    for (const message of messages) {
      const cancels = cancelledRequestId(message);
      if (cancels === undefined || !this.cancelled.has(cancels)) this.onmessage?.(message, extra);
    }
    if (this.pending.size > 0) await this.withinDeadline(finished);
    return ids.filter((id) => !this.cancelled.has(id)).map((id) => this.responses.get(id)!).filter(Boolean);
  }

  private async withinDeadline(finished: Promise<void>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.deadlineMs);
    });
    const outcome = await Promise.race([finished, late]);
    clearTimeout(timer);
    if (outcome !== 'late') return;
    // Marked before the answer goes: a tool call still running sees it (McpCall.cancelled, and
    // commitToCharge refuses it), so it is not charged for the error it was answered. One
    // already committed to its usage event is not given up: it may be charged, so it gets its
    // real answer (its result, or the publish's own refusal, not charged), and the POST waits
    // for it; the publish's own deadline (USAGE_PUBLISH_DEADLINE_MS, core/usage) bounds that
    // wait.
    for (const id of this.pending) if (!this.charging.has(id)) this.overdue.add(id);
    for (const id of this.overdue) {
      // withErrorData logs this text under the answer's requestId and sends the catalogue's internal_error.
      const error = { jsonrpc: '2.0' as const, id, error: { code: RpcCode.InternalError, message: `No answer within ${this.deadlineMs} ms (JsonResponseTransport's deadline)` } };
      this.responses.set(id, withErrorData(error, this.nextRequestId, this.logger));
      this.pending.delete(id);
    }
    // send() resolves `finished` once the last of them is answered.
    if (this.pending.size > 0) await finished;
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
