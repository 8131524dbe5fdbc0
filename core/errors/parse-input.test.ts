import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AppError } from './app-error.js';
import { parseInput } from './parse-input.js';

describe('parseInput', () => {
  const schema = z.object({ name: z.string().trim().min(1, 'must not be empty'), limits: z.object({ perSecond: z.number().int().positive() }) });

  it('when the input matches, then it returns the parsed value', () => {
    expect(parseInput(schema, { name: ' Acme ', limits: { perSecond: 5 } })).toEqual({ name: 'Acme', limits: { perSecond: 5 } });
  });

  it('when it does not, then it throws invalid_params naming every problem by its path', () => {
    let thrown: unknown;
    try {
      parseInput(schema, { name: '  ', limits: { perSecond: 0 } });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AppError);
    const err = thrown as AppError;
    expect(err.code).toBe('invalid_params');
    expect(err.status).toBe(422);
    expect(err.details).toEqual([
      { path: 'name', message: 'must not be empty' },
      { path: 'limits.perSecond', message: expect.stringMatching(/>0/) },
    ]);
    expect(err.message).toMatch(/^name: must not be empty; limits\.perSecond: /);
  });

  it('when the input is not even an object, then the detail points at the input itself', () => {
    expect(() => parseInput(schema, 'nope')).toThrow(/^\(input\): /);
  });
});
