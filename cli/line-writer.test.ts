import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLineWriter } from './line-writer.js';

// A reader slower than the writer: each chunk is taken a millisecond later.
function slowSink() {
  const received: string[] = [];
  let mostBuffered = 0;
  const stream = new Writable({
    highWaterMark: 64,
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk.toString());
      setTimeout(done, 1);
    },
  });
  return { stream, received, track: () => (mostBuffered = Math.max(mostBuffered, stream.writableLength)), mostBuffered: () => mostBuffered };
}

describe('line writer', () => {
  it('when lines are written then they arrive in order, a newline each, several to a write', async () => {
    const sink = slowSink();
    const out = createLineWriter(sink.stream, 3);
    for (const line of ['a', 'b', 'c', 'd']) await out.line(line);
    await out.flush();
    await new Promise((resolve) => sink.stream.end(resolve));
    expect(sink.received).toEqual(['a\nb\nc\n', 'd\n']);
  });

  it('when the reader is slower than the writer then the writer waits instead of queueing everything', async () => {
    const sink = slowSink();
    const out = createLineWriter(sink.stream, 10);
    const line = 'x'.repeat(20);
    for (let i = 0; i < 500; i++) {
      await out.line(line);
      sink.track();
    }
    await out.flush();
    await new Promise((resolve) => sink.stream.end(resolve));
    // At most the stream's high-water mark plus one write of 10 lines is ever queued, against
    // all 500 lines (10.5 kB) when the stream's answer is ignored.
    expect(sink.mostBuffered()).toBeLessThanOrEqual(64 + 10 * 21);
    expect(sink.received.join('')).toBe(`${line}\n`.repeat(500));
  });
});
