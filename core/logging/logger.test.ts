import { describe, expect, it } from 'vitest';
import { createLogger } from './logger.js';

describe('createLogger', () => {
  it('when a field other than `err` holds an Error (kafkajs logs one as `error`) then the line has its name, message and stack, not {}', () => {
    const lines: string[] = [];
    const logger = createLogger({ level: 'info', write: (line) => lines.push(line) });
    const cause = new Error('connect ECONNREFUSED 127.0.0.1:42050');
    logger.error('Error when calling eachBatch', { error: cause, err: new TypeError('x'), partition: 1 });
    const entry = JSON.parse(lines[0]!) as Record<string, { name?: string; message?: string; stack?: string }>;
    expect(entry.error).toMatchObject({ name: 'Error', message: 'connect ECONNREFUSED 127.0.0.1:42050', stack: expect.stringContaining('logger.test.ts') });
    expect(entry.err).toMatchObject({ name: 'TypeError', message: 'x' });
    expect(entry.partition).toBe(1);
  });
});
