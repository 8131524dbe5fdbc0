import { describe, expect, it } from 'vitest';
import { createLogger } from '../core/logging/index.js';
import { withErrorData } from './errors.js';

// withErrorData is where JSON-RPC errors the SDK made itself leave the tool server: an internal
// one is sent with the catalogue's message only, so its own text must reach the log.

describe('withErrorData', () => {
  it('when the SDK answers an internal error then its text goes to the log under the requestId and the caller gets the catalogue\'s message', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
    const sdkError = { jsonrpc: '2.0' as const, id: 4, error: { code: -32603, message: 'Server does not support task creation for tools/call' } };
    const sent = withErrorData(sdkError, 'req_11111111-2222-4333-8444-555555555555', logger);
    expect(sent).toMatchObject({ id: 4, error: { code: -32603, data: { code: 'internal_error', requestId: 'req_11111111-2222-4333-8444-555555555555' } } });
    expect(JSON.stringify(sent)).not.toContain('task creation');
    expect(lines.map((l) => JSON.parse(l))).toEqual([expect.objectContaining({
      level: 'error', requestId: 'req_11111111-2222-4333-8444-555555555555', rpcError: expect.objectContaining({ code: -32603, message: 'Server does not support task creation for tools/call' }),
    })]);
  });

  it('when the SDK answers a caller\'s mistake (method not found) then nothing is logged', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
    const sent = withErrorData({ jsonrpc: '2.0', id: 5, error: { code: -32601, message: 'Method not found' } }, 'req_11111111-2222-4333-8444-555555555555', logger);
    expect(sent).toMatchObject({ error: { code: -32601, message: 'Method not found', data: { code: 'unknown_endpoint' } } });
    expect(lines).toEqual([]);
  });
});
