import { Readable } from 'node:stream';

export interface LineStreamOptions {
  /** After each line: a newline, or CR LF for CSV (RFC 4180). */
  lineEnd?: string;
  /** Before the first line (a CSV's byte order mark); sent only once that line has been read. */
  start?: string;
  linesPerChunk?: number;
}

/**
 * A response body of unbounded size (a ledger download) from lines read one at a time: each
 * ended by `lineEnd`, sent a few hundred at a time, read only as fast as the client takes them.
 * The first line is read before this resolves, so a store that fails at once gets the error
 * page instead of a 200 with an empty file. A download cut short (the browser gone, a HEAD
 * request, which never reads the body) returns the lines' generator, so an export ends its
 * transaction instead of holding a pooled connection.
 */
export async function lineStream(lines: AsyncGenerator<string>, { lineEnd = '\n', start = '', linesPerChunk = 500 }: LineStreamOptions = {}): Promise<Readable> {
  const first = await lines.next();
  let done = first.done === true;
  let pending = done ? (start ? [start] : []) : [start + first.value + lineEnd];
  return new Readable({
    async read() {
      try {
        while (!done && pending.length < linesPerChunk) {
          const next = await lines.next();
          if (next.done) done = true;
          else pending.push(next.value + lineEnd);
        }
      } catch (err) {
        // The generator is finished once it has thrown (its `finally` has run).
        done = true;
        this.destroy(err as Error);
        return;
      }
      if (this.destroyed) return;
      if (pending.length > 0) this.push(pending.join(''));
      pending = [];
      if (done) this.push(null);
    },
    destroy(err, callback) {
      if (done) return callback(err);
      done = true;
      lines.return(undefined).then(() => callback(err), () => callback(err));
    },
  });
}
