import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDossiers } from '../../sample-data/index.js';
import { startParsePool, type ParsePool } from './parse-pool.js';
import { prepareLines } from './prepare-line.js';

const lines = [...generateDossiers({ count: 40, seed: 81_200_101 })].map((d) => JSON.stringify(d));
lines.splice(7, 0, '{"fiscalCode": "0090581100', '   ');
lines.splice(20, 0, JSON.stringify({ fiscalCode: '123', legalName: 'X' }));

let pool: ParsePool;
beforeAll(async () => {
  const started = await startParsePool({ size: 2 });
  if (!started.ok) throw new Error(`parser threads did not start: ${started.reason}`);
  pool = started.pool;
});
afterAll(async () => {
  await pool?.close();
});

describe('parse pool', () => {
  it('when chunks are parsed by two threads then each answer is what the main thread would have made, line numbers included', async () => {
    const chunks = [lines.slice(0, 10), lines.slice(10, 25), lines.slice(25)];
    const answers = await Promise.all([pool.parse({ lines: chunks[0]!, firstLine: 1 }), pool.parse({ lines: chunks[1]!, firstLine: 11 }), pool.parse({ lines: chunks[2]!, firstLine: 26 })]);
    const expected = prepareLines(lines, 1);
    expect(answers.flat()).toEqual(expected);
    expect(expected.filter((e) => !e.ok).map((e) => !e.ok && e.rejection.line)).toEqual([8, 21]);
    expect(expected).toHaveLength(lines.length - 1); // the blank line leaves no entry
  });

  it('when lines arrive as a block of bytes then the thread decodes them to the same answers', async () => {
    const bytes = Buffer.from(lines.slice(0, 25).join('\r\n') + '\n');
    expect(await pool.parse({ bytes, firstLine: 1 })).toEqual(prepareLines(lines.slice(0, 25), 1));
  });

  it('when the worker entry cannot be loaded then starting says why instead of throwing', async () => {
    const started = await startParsePool({ size: 1, entry: new URL('./no-such-parse-worker.js', import.meta.url) });
    expect(started.ok).toBe(false);
    expect(!started.ok && started.reason).toMatch(/no-such-parse-worker|Cannot find module/);
  });

  it('when the pool is closed then a further chunk is refused', async () => {
    const started = await startParsePool({ size: 1 });
    if (!started.ok) throw new Error(started.reason);
    await started.pool.close();
    await expect(started.pool.parse({ lines: lines.slice(0, 2), firstLine: 1 })).rejects.toThrow(/closed/);
  });
});
