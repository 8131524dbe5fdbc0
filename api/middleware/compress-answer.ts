import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Middleware, ParameterizedContext } from 'koa';
import type { Logger } from '../../core/logging/index.js';
import type { ApiState } from '../state.js';

const gzipAsync = promisify(gzip);

// Below this an answer gains little (an error envelope, a short profile) and costs a zlib job.
const MIN_BYTES = 1_024;

/**
 * Answers of 1 KB or more go gzip-compressed to a client that asks for it (Accept-Encoding): a
 * report is ~50–90 KB of JSON and about a tenth of that compressed. The work runs on libuv's
 * thread pool, not the event loop. Runs after the answer is final, the usage event included, so
 * a compression failure (not seen in practice) sends the answer as it is rather than an error
 * for a call already charged. The docs page's assets are the same buffers on every request:
 * each is compressed once.
 */
export function compressAnswer(logger: Logger): Middleware<ApiState> {
  const compressedAssets = new WeakMap<Buffer, Buffer>();
  const compress = async (ctx: ParameterizedContext<ApiState>) => {
    // Runs outside errorEnvelope, after the answer was made: whatever fails here leaves the
    // answer as it is.
    try {
      await compressBody(ctx);
    } catch (err) {
      logger.warn('could not compress an answer; sent as it is', { requestId: ctx.state.requestId, err });
    }
  };
  const compressBody = async (ctx: ParameterizedContext<ApiState>) => {
    const body: unknown = ctx.body;
    if (body === null || body === undefined || ctx.method === 'HEAD' || ctx.response.get('Content-Encoding')) return;
    if (typeof (body as { pipe?: unknown }).pipe === 'function') return; // a stream: none of ours
    // Most answers are strings of known length: no copy is made unless one is compressed.
    const size = typeof body === 'string' ? Buffer.byteLength(body) : Buffer.isBuffer(body) ? body.length : -1;
    const json = size === -1 ? JSON.stringify(body) : undefined; // what Koa would send for an object (type already json)
    if ((json === undefined ? size : Buffer.byteLength(json)) < MIN_BYTES) return;
    // The answer differs by Accept-Encoding, so it says so (RFC 9110 §12.5.5): a private cache (a
    // browser's, an HTTP client's) may keep answers to requests with a key, and must not hand a
    // gzip answer to a client that cannot read it. Only a keyed request without Accept-Encoding
    // (most machine clients) skips this middleware and the header: its plain answer suits anyone.
    ctx.vary('Accept-Encoding');
    if (!ctx.get('Accept-Encoding') || ctx.acceptsEncodings('gzip', 'identity') !== 'gzip') return;
    const reused = Buffer.isBuffer(body) ? compressedAssets.get(body) : undefined;
    const compressed = reused ?? (await gzipAsync(json ?? (body as string | Buffer)));
    if (Buffer.isBuffer(body) && !reused) compressedAssets.set(body, compressed);
    ctx.body = compressed;
    ctx.set('Content-Encoding', 'gzip');
  };
  // A keyed request that does not ask for gzip (most machine clients: curl, autocannon) has
  // nothing to do here: it passes straight through, without a step after the answer (which
  // cost the financials benchmark ~8% of its calls per second).
  return (ctx, next) => (!ctx.get('Accept-Encoding') && ctx.get('Authorization') ? next() : next().then(() => compress(ctx)));
}
