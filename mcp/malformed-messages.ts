import type { ErrorDetail } from '../core/errors/index.js';

// Why a body's messages are no JSON-RPC 2.0 messages, one detail per message refused, named by
// its place in a batch. The SDK's schema is a union of four message shapes, and zod's account of
// a union that failed names none of them usefully; an agent whose batch of three was refused
// with "expected a JSON-RPC 2.0 message (or a batch of at most 20)" could not tell which
// message, nor what was wrong with it.

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const isId = (value: unknown) => typeof value === 'string' || Number.isInteger(value);

/** The first thing wrong with one message that the SDK's schema refused. */
function whatIsWrong(message: unknown): { path: string; message: string } {
  if (!isObject(message)) return { path: '', message: 'not a JSON-RPC message, which is an object' };
  if (message.jsonrpc !== '2.0') return { path: 'jsonrpc', message: 'must be "2.0"' };
  if ('id' in message && !isId(message.id)) return { path: 'id', message: 'must be a string or an integer' };
  if ('method' in message) {
    if (typeof message.method !== 'string') return { path: 'method', message: 'must be a string' };
    if ('params' in message && !isObject(message.params)) return { path: 'params', message: 'must be an object' };
    if (isObject(message.params) && '_meta' in message.params && !isObject(message.params._meta)) return { path: 'params._meta', message: 'must be an object' };
  } else if ('result' in message || 'error' in message) {
    if (!('id' in message)) return { path: 'id', message: 'required in a response' };
    if ('result' in message && !isObject(message.result)) return { path: 'result', message: 'must be an object' };
    if ('error' in message && !(isObject(message.error) && Number.isInteger(message.error.code) && typeof message.error.message === 'string')) {
      return { path: 'error', message: 'must be an object with an integer code and a string message' };
    }
  } else {
    return { path: '', message: 'neither a request or notification (no method) nor a response (no result or error)' };
  }
  return { path: '', message: 'not a JSON-RPC 2.0 message' };
}

/** One detail per message the SDK's schema refused (`valid`, its verdict on each, as the caller
 * parsed them); `batch` when the body was an array. */
export function malformedMessageDetails(messages: readonly unknown[], valid: readonly boolean[], batch: boolean): ErrorDetail[] {
  return messages.flatMap((message, index) => {
    if (valid[index]) return [];
    const wrong = whatIsWrong(message);
    const path = [batch ? String(index) : '', wrong.path].filter((part) => part !== '').join('.');
    return [{ path: path === '' ? '(message)' : path, message: wrong.message }];
  });
}
