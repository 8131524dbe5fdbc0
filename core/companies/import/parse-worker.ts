import { parentPort } from 'node:worker_threads';
import { blockLines } from './line-blocks.js';
import { prepareLines } from './prepare-line.js';
import type { ParseReply, ParseRequest } from './parse-pool.js';

// Entry of a parser thread (started by parse-pool.ts): decoding (for blocks of bytes),
// JSON.parse, zod validation and prepareCompany for chunks of raw lines, answered in the order asked.
const port = parentPort;
if (port === null) throw new Error('parse-worker.ts runs only as a worker thread');

port.on('message', (request: ParseRequest) => {
  let reply: ParseReply;
  try {
    const lines = 'bytes' in request ? blockLines(request.bytes) : request.lines;
    reply = { id: request.id, entries: prepareLines(lines, request.firstLine) };
  } catch (err) {
    // A bug in preparation, not a bad line (those are rejections): the import stops, as it
    // does when the same error is thrown on the main thread.
    reply = { id: request.id, error: err instanceof Error ? `${err.message}\n${err.stack ?? ''}` : String(err) };
  }
  port.postMessage(reply);
});
// Sent once the module graph has loaded: the pool falls back to the main thread otherwise.
port.postMessage({ ready: true });
